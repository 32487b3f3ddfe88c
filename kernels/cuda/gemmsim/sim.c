// sim.c replays the kernels of kernels/cuda/src/gemm.cu on the host, thread
// by thread, using the very index helpers the kernels use (gemm.cu is
// included below; its CUDA part is compiled out). What the hardware does is
// emulated here from the PTX ISA, independently of gemm.cu:
//   - ldmatrix.sync.aligned.m8n8.x4.b16: lanes 8q..8q+7 give the row
//     addresses of matrix q; lane l receives, in register q, row l/4,
//     columns 2·(l%4) and 2·(l%4)+1 of matrix q.
//   - mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: the fragment tables
//     ("Matrix Fragments for mma.m16n8k16 with floating point type"), with
//     g = lane>>2, tg = lane%4:
//       A: reg0 = A[g][2tg..+1], reg1 = A[g+8][2tg..+1],
//          reg2 = A[g][2tg+8..+9], reg3 = A[g+8][2tg+8..+9]
//       B: reg0 = B[2tg..+1][g], reg1 = B[2tg+8..+9][g]
//       C/D: d0 = D[g][2tg], d1 = D[g][2tg+1], d2 = D[g+8][2tg], d3 = D[g+8][2tg+1]
// Pipelining is replayed in program order (prologue, then per k tile: issue
// the copy of tile kt+STAGES-1, compute on tile kt), which checks the stage
// arithmetic; races are not modelled (the barrier placement is argued in the
// kernel comments).
#include <math.h>
#include <stdlib.h>
#include <string.h>

// gemm_cu.h and common_cuh.h are symlinks to ../src/gemm.cu and
// ../src/common.cuh: the go command hashes .h files of the package directory
// only, so the links make it rebuild this package when the kernels change.
#include "common_cuh.h"
#include "gemm_cu.h"
#include "sim.h"

typedef unsigned long long u64;

#define F16_THREADS POG_GEMM_F16_THREADS
#define F16_WARPS (POG_GEMM_F16_THREADS / 32)
#define MT POG_GEMM_F16_MT
#define NT POG_GEMM_F16_NT

static int to_int(float x, pog_sim_faults* f) {
	if (isnan(x)) {
		f->uninit_reads++;
		return 0;
	}
	return (int)lrintf(x);
}

static float rd_smem(const float* s, unsigned off, pog_sim_faults* f) {
	float v = s[off];
	if (isnan(v)) f->uninit_reads++;
	return v;
}

// ldmatrix.x4 from a stage of halves (stored as floats); addr: element offsets.
static void sim_ldmatrix_x4(const float* s, const unsigned addr[32], float frag[32][4][2],
	pog_sim_faults* f) {
	for (unsigned q = 0; q < 4; q++) {
		unsigned seen = 0;
		for (unsigned r = 0; r < 8; r++) {
			unsigned a = addr[8 * q + r];
			if (a % 8) f->misaligned++; // 16-byte row address
			unsigned grp = (a * 2 / 16) % 8;
			if (seen & (1u << grp)) f->ldm_conflicts++;
			seen |= 1u << grp;
		}
		for (unsigned l = 0; l < 32; l++)
			for (unsigned h = 0; h < 2; h++)
				frag[l][q][h] = rd_smem(s, addr[8 * q + l / 4] + 2 * (l % 4) + h, f);
	}
}

static void sim_mma_16816(float d[32][4], float a[32][4][2], float b[32][2][2]) {
	float A[16][16], B[16][8], D[16][8];
	for (unsigned l = 0; l < 32; l++) {
		unsigned g = l >> 2, tg = l & 3;
		for (unsigned h = 0; h < 2; h++) {
			A[g][2 * tg + h] = a[l][0][h];
			A[g + 8][2 * tg + h] = a[l][1][h];
			A[g][2 * tg + 8 + h] = a[l][2][h];
			A[g + 8][2 * tg + 8 + h] = a[l][3][h];
			B[2 * tg + h][g] = b[l][0][h];
			B[2 * tg + 8 + h][g] = b[l][1][h];
		}
		D[g][2 * tg] = d[l][0];
		D[g][2 * tg + 1] = d[l][1];
		D[g + 8][2 * tg] = d[l][2];
		D[g + 8][2 * tg + 1] = d[l][3];
	}
	for (unsigned r = 0; r < 16; r++)
		for (unsigned c = 0; c < 8; c++) {
			float s = D[r][c];
			for (unsigned k = 0; k < 16; k++) s += A[r][k] * B[k][c];
			D[r][c] = s;
		}
	for (unsigned l = 0; l < 32; l++) {
		unsigned g = l >> 2, tg = l & 3;
		d[l][0] = D[g][2 * tg];
		d[l][1] = D[g][2 * tg + 1];
		d[l][2] = D[g + 8][2 * tg];
		d[l][3] = D[g + 8][2 * tg + 1];
	}
}

static void store_int(int* C, u64 csize, u64 idx, int v, pog_sim_faults* f) {
	if (idx >= csize) {
		f->oob_writes++;
		return;
	}
	C[idx] = v;
}

// Copy k tile kt of the block's operand rows into one smem stage, as the
// cp.async of all threads do.
static void f16_load_stage(float* s, const float* g, u64 gbase, u64 gsize, u64 Kp, u64 kt,
	pog_sim_faults* f) {
	static unsigned char written[POG_GEMM_F16_TILE];
	memset(written, 0, sizeof written);
	for (unsigned tid = 0; tid < F16_THREADS; tid++)
		for (unsigned q = 0; q < POG_GEMM_F16_LOADS; q++) {
			unsigned row = pog_f16_ld_row(tid, q), ch = pog_f16_ld_chunk(tid, q);
			u64 src = gbase + pog_f16_ld_src(row, ch, Kp, 0) + kt * POG_GEMM_F16_BK;
			unsigned dst = pog_f16_smem_off(row, ch);
			if (src % 8 || dst % 8) f->misaligned++;
			for (unsigned e = 0; e < 8; e++) {
				if (dst + e >= POG_GEMM_F16_TILE) {
					f->smem_overlap++;
					continue;
				}
				if (written[dst + e]) f->smem_overlap++;
				written[dst + e] = 1;
				if (src + e >= gsize) {
					f->oob_reads++;
					s[dst + e] = NAN;
				} else {
					s[dst + e] = g[src + e];
				}
			}
		}
	for (unsigned x = 0; x < POG_GEMM_F16_TILE; x++)
		if (!written[x]) f->smem_gap++;
}

void pog_sim_gemm_f16(const float* A, const float* Bt, int* C, u64 M, u64 N, u64 Kp, u64 t,
	u64 batches, pog_sim_faults* f) {
	const u64 Mp = pog_roundup(M, POG_PAD_MN), Np = pog_roundup(N, POG_PAD_MN);
	const u64 asize = batches * Mp * Kp, bsize = batches * Np * Kp, csize = batches * M * N;
	const unsigned KT = (unsigned)(Kp / POG_GEMM_F16_BK);
	const unsigned lt = pog_log2_u64(t);
	float* sA = malloc(sizeof(float) * POG_GEMM_F16_STAGES * POG_GEMM_F16_TILE);
	float* sB = malloc(sizeof(float) * POG_GEMM_F16_STAGES * POG_GEMM_F16_TILE);
	// acc[warp][mt][nt][lane][reg]
	float(*acc)[MT][NT][32][4] = malloc(sizeof(float) * F16_WARPS * MT * NT * 32 * 4);
	static float af[MT][32][4][2], bf[NT][32][2][2], tmp[32][4][2];

	for (u64 b = 0; b < batches; b++)
		for (unsigned by = 0; by < Mp / POG_GEMM_F16_BM; by++)
			for (unsigned bx = 0; bx < Np / POG_GEMM_F16_BN; bx++) {
				unsigned tm, tn;
				pog_gemm_block_tile(bx, by, (unsigned)(Np / POG_GEMM_F16_BN),
					(unsigned)(Mp / POG_GEMM_F16_BM), &tm, &tn);
				const u64 m0 = (u64)tm * POG_GEMM_F16_BM, n0 = (u64)tn * POG_GEMM_F16_BN;
				const u64 gA = (b * Mp + m0) * Kp, gB = (b * Np + n0) * Kp;
				for (unsigned x = 0; x < POG_GEMM_F16_STAGES * POG_GEMM_F16_TILE; x++)
					sA[x] = sB[x] = NAN;
				memset(acc, 0, sizeof(float) * F16_WARPS * MT * NT * 32 * 4);

				for (unsigned s = 0; s < POG_GEMM_F16_STAGES - 1; s++)
					if (s < KT) {
						f16_load_stage(sA + s * POG_GEMM_F16_TILE, A, gA, asize, Kp, s, f);
						f16_load_stage(sB + s * POG_GEMM_F16_TILE, Bt, gB, bsize, Kp, s, f);
					}
				unsigned stage = 0;
				for (unsigned kt = 0; kt < KT; kt++) {
					unsigned nk = kt + POG_GEMM_F16_STAGES - 1;
					if (nk < KT) {
						unsigned ns = stage == 0 ? POG_GEMM_F16_STAGES - 1 : stage - 1;
						if (ns == stage || ns != nk % POG_GEMM_F16_STAGES) f->smem_overlap++;
						f16_load_stage(sA + ns * POG_GEMM_F16_TILE, A, gA, asize, Kp, nk, f);
						f16_load_stage(sB + ns * POG_GEMM_F16_TILE, Bt, gB, bsize, Kp, nk, f);
					}
					if (stage != kt % POG_GEMM_F16_STAGES) f->smem_overlap++;
					const float* as = sA + stage * POG_GEMM_F16_TILE;
					const float* bs = sB + stage * POG_GEMM_F16_TILE;
					for (unsigned warp = 0; warp < F16_WARPS; warp++) {
						const unsigned wrow = pog_f16_warp_row(warp);
						const unsigned wcol = pog_f16_warp_col(warp);
						for (unsigned ks = 0; ks < POG_GEMM_F16_BK / 16; ks++) {
							unsigned addr[32];
							for (unsigned mt = 0; mt < MT; mt++) {
								for (unsigned lane = 0; lane < 32; lane++) {
									unsigned row = wrow + mt * 16u + pog_f16_ldm_a_row(lane);
									unsigned ch = ks * 2u + pog_f16_ldm_a_kchunk(lane);
									addr[lane] = pog_f16_smem_off(row, ch);
								}
								sim_ldmatrix_x4(as, addr, af[mt], f);
							}
							for (unsigned np = 0; np < NT / 2; np++) {
								for (unsigned lane = 0; lane < 32; lane++) {
									unsigned row = wcol + np * 16u + pog_f16_ldm_b_row(lane);
									unsigned ch = ks * 2u + pog_f16_ldm_b_kchunk(lane);
									addr[lane] = pog_f16_smem_off(row, ch);
								}
								sim_ldmatrix_x4(bs, addr, tmp, f);
								// the kernel's register order:
								// bf[2np][0], bf[2np][1], bf[2np+1][0], bf[2np+1][1]
								for (unsigned lane = 0; lane < 32; lane++)
									for (unsigned h = 0; h < 2; h++) {
										bf[2 * np][lane][0][h] = tmp[lane][0][h];
										bf[2 * np][lane][1][h] = tmp[lane][1][h];
										bf[2 * np + 1][lane][0][h] = tmp[lane][2][h];
										bf[2 * np + 1][lane][1][h] = tmp[lane][3][h];
									}
							}
							for (unsigned mt = 0; mt < MT; mt++)
								for (unsigned nt = 0; nt < NT; nt++)
									sim_mma_16816(acc[warp][mt][nt], af[mt], bf[nt]);
						}
					}
					stage = stage + 1 == POG_GEMM_F16_STAGES ? 0 : stage + 1;
				}

				// Epilogue, as in the kernel.
				for (unsigned warp = 0; warp < F16_WARPS; warp++) {
					const unsigned wrow = pog_f16_warp_row(warp);
					const unsigned wcol = pog_f16_warp_col(warp);
					for (unsigned lane = 0; lane < 32; lane++)
						for (unsigned mt = 0; mt < MT; mt++)
							for (unsigned h = 0; h < 2; h++) {
								u64 i = m0 + wrow + mt * 16u + pog_mma_c_row(lane, 2u * h);
								if (i >= M) continue;
								for (unsigned nt = 0; nt < NT; nt++) {
									u64 j = n0 + wcol + nt * 8u + pog_mma_c_col(lane, 2u * h);
									if (j >= N) continue;
									u64 idx = pog_tile_index(b, i, j, M, N, lt);
									if (idx % 2) f->misaligned++;
									// the int2 covers (i, j) and (i, j+1)
									if (j + 1 >= N || (j >> lt) != ((j + 1) >> lt) ||
										pog_mma_c_col(lane, 2u * h + 1) != pog_mma_c_col(lane, 2u * h) + 1 ||
										pog_mma_c_row(lane, 2u * h + 1) != pog_mma_c_row(lane, 2u * h))
										f->split_runs++;
									store_int(C, csize, idx, to_int(acc[warp][mt][nt][lane][2 * h], f), f);
									store_int(C, csize, idx + 1, to_int(acc[warp][mt][nt][lane][2 * h + 1], f), f);
								}
							}
				}
			}
	free(sA);
	free(sB);
	free(acc);
}

void pog_sim_gemm_f32(const float* A, const float* Bt, int* C, u64 M, u64 N, u64 Kp, u64 t,
	u64 batches, pog_sim_faults* f) {
	const u64 Mp = pog_roundup(M, POG_PAD_MN), Np = pog_roundup(N, POG_PAD_MN);
	const u64 asize = batches * Mp * Kp, bsize = batches * Np * Kp, csize = batches * M * N;
	const unsigned KT = (unsigned)(Kp / POG_GEMM_F32_BK);
	const unsigned lt = pog_log2_u64(t);
	static float sA[2][POG_GEMM_F32_BK][POG_GEMM_F32_LDS], sB[2][POG_GEMM_F32_BK][POG_GEMM_F32_LDS];
	static float acc[POG_GEMM_F32_THREADS][8][8];

	for (u64 b = 0; b < batches; b++)
		for (unsigned by = 0; by < Mp / POG_GEMM_F32_BM; by++)
			for (unsigned bx = 0; bx < Np / POG_GEMM_F32_BN; bx++) {
				unsigned tm, tn;
				pog_gemm_block_tile(bx, by, (unsigned)(Np / POG_GEMM_F32_BN),
					(unsigned)(Mp / POG_GEMM_F32_BM), &tm, &tn);
				const u64 m0 = (u64)tm * POG_GEMM_F32_BM, n0 = (u64)tn * POG_GEMM_F32_BN;
				const u64 gA = (b * Mp + m0) * Kp, gB = (b * Np + n0) * Kp;
				for (unsigned x = 0; x < 2 * POG_GEMM_F32_BK * POG_GEMM_F32_LDS; x++)
					(&sA[0][0][0])[x] = (&sB[0][0][0])[x] = NAN;
				memset(acc, 0, sizeof acc);

				// All threads' float4 loads of k tile kt into buffer buf.
				for (unsigned pass = 0; pass <= KT; pass++) {
					// pass 0: the prologue (tile 0 into buffer 0); pass p > 0: compute
					// on tile p-1 from buffer (p-1)%2, then store tile p into buffer p%2.
					if (pass > 0) {
						unsigned cur = (pass - 1) & 1u;
						for (unsigned tid = 0; tid < POG_GEMM_F32_THREADS; tid++) {
							unsigned tx = tid & 15u, ty = tid >> 4;
							unsigned r0 = pog_f32_thread_row(ty, 0), r4 = pog_f32_thread_row(ty, 4);
							unsigned c0 = pog_f32_thread_col(tx, 0), c4 = pog_f32_thread_col(tx, 4);
							if (r0 % 4 || r4 % 4 || c0 % 4 || c4 % 4) f->misaligned++;
							for (unsigned k = 0; k < POG_GEMM_F32_BK; k++) {
								float a[8], bv[8];
								for (unsigned e = 0; e < 4; e++) {
									a[e] = rd_smem(&sA[cur][k][0], r0 + e, f);
									a[4 + e] = rd_smem(&sA[cur][k][0], r4 + e, f);
									bv[e] = rd_smem(&sB[cur][k][0], c0 + e, f);
									bv[4 + e] = rd_smem(&sB[cur][k][0], c4 + e, f);
								}
								for (unsigned r = 0; r < 8; r++)
									for (unsigned c = 0; c < 8; c++)
										acc[tid][r][c] = fmaf(a[r], bv[c], acc[tid][r][c]);
							}
						}
					}
					unsigned kt = pass; // tile to store now
					if (kt >= KT) break;
					unsigned buf = kt & 1u;
					// poison the buffer first so gaps show up as NaN reads
					for (unsigned x = 0; x < POG_GEMM_F32_BK * POG_GEMM_F32_LDS; x++)
						(&sA[buf][0][0])[x] = (&sB[buf][0][0])[x] = NAN;
					for (unsigned tid = 0; tid < POG_GEMM_F32_THREADS; tid++) {
						unsigned lrow = pog_f32_ld_row(tid), lk = pog_f32_ld_k(tid);
						u64 sa = gA + pog_f32_ld_src(lrow, lk, Kp, 0) + (u64)kt * POG_GEMM_F32_BK;
						u64 sb = gB + pog_f32_ld_src(lrow, lk, Kp, 0) + (u64)kt * POG_GEMM_F32_BK;
						if (sa % 4 || sb % 4) f->misaligned++;
						for (unsigned e = 0; e < 4; e++) {
							if (sa + e >= asize || sb + e >= bsize) {
								f->oob_reads++;
								continue;
							}
							sA[buf][lk + e][lrow] = A[sa + e];
							sB[buf][lk + e][lrow] = Bt[sb + e];
						}
					}
				}

				for (unsigned tid = 0; tid < POG_GEMM_F32_THREADS; tid++) {
					unsigned tx = tid & 15u, ty = tid >> 4;
					for (unsigned r = 0; r < 8; r++) {
						u64 i = m0 + pog_f32_thread_row(ty, r);
						if (i >= M) continue;
						for (unsigned cg = 0; cg < 2; cg++) {
							u64 j = n0 + pog_f32_thread_col(tx, 4u * cg);
							if (j >= N) continue;
							u64 idx = pog_tile_index(b, i, j, M, N, lt);
							if (idx % 4) f->misaligned++;
							for (unsigned e = 0; e < 4; e++) {
								if (pog_f32_thread_col(tx, 4u * cg + e) != pog_f32_thread_col(tx, 4u * cg) + e ||
									j + e >= N || ((j + e) >> lt) != (j >> lt))
									f->split_runs++;
								store_int(C, csize, idx + e, to_int(acc[tid][r][4 * cg + e], f), f);
							}
						}
					}
				}
			}
}

void pog_sim_f32_to_tiles(const float* Cf, int* C, u64 M, u64 N, u64 t, u64 rows, unsigned gx,
	unsigned gy, pog_sim_faults* f) {
	(void)M;
	const unsigned bdim = POG_TO_TILES_THREADS;
	const unsigned lt = pog_log2_u64(t);
	const u64 strip = N << lt;
	const u64 groups = strip >> 2;
	const u64 strips = rows >> lt;
	const u64 size = rows * N;
	for (unsigned by = 0; by < gy; by++)
		for (unsigned bx = 0; bx < gx; bx++)
			for (unsigned tx = 0; tx < bdim; tx++) {
				const u64 xstart = (u64)bx * bdim + tx, xstride = (u64)gx * bdim;
				for (u64 I = by; I < strips; I += gy) {
					u64 dst = I * strip;
					for (u64 g = xstart; g < groups; g += xstride) {
						u64 e = g << 2;
						u64 src = pog_to_tiles_src(I, e, N, lt);
						if (src % 4 || (dst + e) % 4) f->misaligned++;
						for (unsigned x = 0; x < 4; x++) {
							// the float4 must be 4 consecutive elements of one row
							if (pog_to_tiles_src(I, e + x, N, lt) != src + x) f->split_runs++;
							if (src + x >= size) {
								f->oob_reads++;
								continue;
							}
							store_int(C, size, dst + e + x, to_int(Cf[src + x], f), f);
						}
					}
				}
			}
}

unsigned long long pog_sim_block_tile_faults(unsigned gx, unsigned gy) {
	unsigned long long faults = 0;
	unsigned char* seen = calloc((size_t)gx * gy, 1);
	for (unsigned by = 0; by < gy; by++)
		for (unsigned bx = 0; bx < gx; bx++) {
			unsigned tm, tn;
			pog_gemm_block_tile(bx, by, gx, gy, &tm, &tn);
			if (tm >= gy || tn >= gx || seen[(size_t)tm * gx + tn]++) faults++;
		}
	free(seen);
	return faults;
}
