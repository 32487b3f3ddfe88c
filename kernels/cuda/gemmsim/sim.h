// sim.h: host replays of the kernels in kernels/cuda/src/gemm.cu.
#ifndef POG_GEMMSIM_H
#define POG_GEMMSIM_H

// Faults the replay observed; every field must stay 0.
typedef struct {
	unsigned long long oob_reads;     // global loads outside the input buffers
	unsigned long long oob_writes;    // output stores outside C
	unsigned long long misaligned;    // vector loads/stores not naturally aligned
	unsigned long long smem_overlap;  // smem element written twice by one tile load
	unsigned long long smem_gap;      // smem element not written by a tile load
	unsigned long long uninit_reads;  // smem read before any write (NaN)
	unsigned long long ldm_conflicts; // ldmatrix phases with repeated bank groups
	unsigned long long split_runs;    // vector store run crossing a tile or N
} pog_sim_faults;

// Inputs hold the element values (halves as floats for the f16 kernel).
// A: batches·Mp·Kp, Bt: batches·Np·Kp, C: batches·M·N (int32).
void pog_sim_gemm_f16(const float* A, const float* Bt, int* C, unsigned long long M,
	unsigned long long N, unsigned long long Kp, unsigned long long t,
	unsigned long long batches, pog_sim_faults* f);
void pog_sim_gemm_f32(const float* A, const float* Bt, int* C, unsigned long long M,
	unsigned long long N, unsigned long long Kp, unsigned long long t,
	unsigned long long batches, pog_sim_faults* f);
// Cf: rows·N floats; C: rows·N ints. gx, gy: the emulated grid.
void pog_sim_f32_to_tiles(const float* Cf, int* C, unsigned long long M, unsigned long long N,
	unsigned long long t, unsigned long long rows, unsigned gx, unsigned gy,
	pog_sim_faults* f);

// Fault count of pog_gemm_block_tile over a gx×gy grid: tiles out of range
// or assigned twice (0 for a bijection).
unsigned long long pog_sim_block_tile_faults(unsigned gx, unsigned gy);

#endif
