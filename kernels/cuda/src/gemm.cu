// gemm.cu: the batched integer-valued GEMMs of a proof round and the
// conversion of a cuBLAS float panel to the tile-major int32 output.
//
// Math (see pog.cu for the layouts): challenge values are small integers, so
// every product and every partial sum is an integer of magnitude <= 2^24 and
// fp32 accumulation is exact in any order. The result is converted with
// __float2int_rn, which is exact on such values.
//
//   class fp16: A in [-256, 255], B in [-8, 7], stored as __half; tensor cores
//               (mma.sync m16n8k16, fp32 accumulate).
//   class fp32: A in [-4096, 4095], B in {-1, +1}, stored as float; plain FFMA
//               on CUDA cores (never TF32, which would round A).
//
// Inputs: batch b's A is Mp×Kp at A + b·Mp·Kp, its Bᵀ is Np×Kp at
// Bt + b·Np·Kp, both row-major (K contiguous, "NT"), zero padded, so loads
// need no bounds checks. Output element (i, j) of batch b, for i < M, j < N
// only, goes to pog_tile_index(b, i, j, M, N, log2 t):
//   ((b·(M/t) + i/t)·(N/t) + j/t)·t² + (i%t)·t + j%t.
//
// The index helpers below (everything between the two "shared with the host
// simulation" markers) compile both under nvcc and as plain C99 under gcc:
// kernels/cuda/gemmsim includes this file and replays each kernel's thread ->
// element mapping on the host, with ldmatrix and mma emulated from the PTX
// ISA's fragment tables, against a naive matmul.
#include "common.cuh"

#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

// ---- shared with the host simulation (plain C99 below) -------------------

// ===========================================================================
// pog_gemm_f16 launch configuration (mirror these on the Go side):
//   block  = (POG_GEMM_F16_THREADS, 1, 1) = (256, 1, 1)
//   grid   = (Np / POG_GEMM_F16_BN, Mp / POG_GEMM_F16_BM, batches)
//          = (Np/128, Mp/128, batches), Np = roundup(N,128), Mp = roundup(M,128)
//   shared = static only, POG_GEMM_F16_SMEM_BYTES = 49152 bytes (48 KiB);
//            dynamic shared memory 0.
// ===========================================================================
#define POG_GEMM_F16_BM 128     // block tile rows (of A / C)
#define POG_GEMM_F16_BN 128     // block tile columns (rows of Bᵀ / cols of C)
#define POG_GEMM_F16_BK 32      // k per pipeline stage (halves)
#define POG_GEMM_F16_STAGES 3   // cp.async pipeline depth
#define POG_GEMM_F16_THREADS 256
#define POG_GEMM_F16_WARPS_N 4  // warps along N; 8 warps = 2 (M) × 4 (N)
#define POG_GEMM_F16_WM 64      // warp tile rows
#define POG_GEMM_F16_WN 32      // warp tile columns
#define POG_GEMM_F16_MT 4       // m16 tiles per warp (WM / 16)
#define POG_GEMM_F16_NT 4       // n8 tiles per warp (WN / 8)
#define POG_GEMM_F16_CHUNKS 4   // 16-byte chunks per smem row (BK·2 / 16)
#define POG_GEMM_F16_LOADS 2    // 16-byte cp.async per thread per tile (BM·CHUNKS / THREADS)
#define POG_GEMM_F16_TILE (POG_GEMM_F16_BM * POG_GEMM_F16_BK) // halves per stage per operand
#define POG_GEMM_F16_SMEM_BYTES (POG_GEMM_F16_STAGES * 2 * POG_GEMM_F16_TILE * 2)

// Shared-memory layout of one stage of one operand: BM rows of BK halves
// (64 bytes = 4 chunks of 16 bytes), with the chunk index XOR-swizzled by
// (row/2)%4. An ldmatrix phase reads one chunk column of 8 consecutive rows
// r0..r0+7 (r0 % 8 == 0); its 16-byte bank group is
// (row%2)·4 + (chunk ^ (row/2)%4), which takes all 8 values over those rows,
// so ldmatrix (and the cp.async stores) are bank-conflict free.
// Returns the element (half) offset of (row, logical chunk) inside the stage.
POG_HD unsigned pog_f16_smem_off(unsigned row, unsigned chunk) {
	return row * POG_GEMM_F16_BK + ((chunk ^ ((row >> 1) & 3u)) << 3);
}

// cp.async mapping: copy q (0..LOADS-1) of thread tid moves the 16-byte chunk
// `chunk` of tile row `row` (same mapping for A and Bᵀ since BM == BN).
// Four consecutive threads read one row's 64 contiguous bytes.
POG_HD unsigned pog_f16_ld_row(unsigned tid, unsigned q) {
	return (tid + q * POG_GEMM_F16_THREADS) >> 2;
}
POG_HD unsigned pog_f16_ld_chunk(unsigned tid, unsigned q) {
	return (tid + q * POG_GEMM_F16_THREADS) & 3u;
}
// Element offset, from the block's first row of the operand, of that chunk for
// k tile kt: row·Kp + kt·BK + chunk·8.
POG_HD unsigned long long pog_f16_ld_src(unsigned row, unsigned chunk, unsigned long long Kp,
	unsigned long long kt) {
	return (unsigned long long)row * Kp + kt * POG_GEMM_F16_BK + chunk * 8u;
}

// Warp tile origin inside the block tile: warps 0-3 cover rows 0-63,
// warps 4-7 rows 64-127; warp%4 picks a 32-column slice.
POG_HD unsigned pog_f16_warp_row(unsigned warp) {
	return (warp / POG_GEMM_F16_WARPS_N) * POG_GEMM_F16_WM;
}
POG_HD unsigned pog_f16_warp_col(unsigned warp) {
	return (warp % POG_GEMM_F16_WARPS_N) * POG_GEMM_F16_WN;
}

// ldmatrix.sync.aligned.m8n8.x4.b16: lane l supplies the row address of row
// l%8 of matrix l/8, and register q of every lane receives matrix q, lane l
// holding its row l/4, columns 2·(l%4)+{0,1}.
//
// A operand of mma.m16n8k16 (.row), PTX ISA "Matrix Fragments for
// mma.m16n8k16 with floating point type": groupID = lane>>2,
// threadID_in_group = lane%4,
//   a0,a1 (reg 0): row groupID,   cols 2·tig+{0,1}
//   a2,a3 (reg 1): row groupID+8, cols 2·tig+{0,1}
//   a4,a5 (reg 2): row groupID,   cols 2·tig+8+{0,1}
//   a6,a7 (reg 3): row groupID+8, cols 2·tig+8+{0,1}
// so matrix q must be (rows 8·(q%2)..+7, k 8·(q/2)..+7): lane l addresses
// row (l%8) + 8·((l/8)%2) of the m16 tile, k chunk (8 halves) l/16.
POG_HD unsigned pog_f16_ldm_a_row(unsigned lane) {
	return (lane & 7u) + ((lane >> 3) & 1u) * 8u;
}
POG_HD unsigned pog_f16_ldm_a_kchunk(unsigned lane) {
	return lane >> 4;
}
// B operand (.col), same table: b0,b1 (reg 0): k = 2·tig+{0,1}, n = groupID;
// b2,b3 (reg 1): k = 2·tig+8+{0,1}, n = groupID. In Bᵀ (row n, k contiguous)
// that is exactly an ldmatrix 8×8 (row n, cols k). One x4 covers two n8 tiles:
// matrix 0 = (n 0-7, k 0-7) -> tile 0 reg 0, matrix 1 = (n 0-7, k 8-15) ->
// tile 0 reg 1, matrix 2 = (n 8-15, k 0-7) -> tile 1 reg 0, matrix 3 =
// (n 8-15, k 8-15) -> tile 1 reg 1: lane l addresses Bᵀ row
// (l%8) + 8·(l/16) of the n16 pair, k chunk (l/8)%2.
POG_HD unsigned pog_f16_ldm_b_row(unsigned lane) {
	return (lane & 7u) + (lane >> 4) * 8u;
}
POG_HD unsigned pog_f16_ldm_b_kchunk(unsigned lane) {
	return (lane >> 3) & 1u;
}

// C/D fragment of mma.m16n8k16 (fp32), same table: c0,c1 at row groupID,
// cols 2·tig+{0,1}; c2,c3 at row groupID+8, same cols. Register r of lane.
POG_HD unsigned pog_mma_c_row(unsigned lane, unsigned r) {
	return (lane >> 2) + (r >> 1) * 8u;
}
POG_HD unsigned pog_mma_c_col(unsigned lane, unsigned r) {
	return (lane & 3u) * 2u + (r & 1u);
}

// ===========================================================================
// pog_gemm_f32 launch configuration (mirror these on the Go side):
//   block  = (POG_GEMM_F32_THREADS, 1, 1) = (256, 1, 1)
//   grid   = (Np / POG_GEMM_F32_BN, Mp / POG_GEMM_F32_BM, batches)
//          = (Np/128, Mp/128, batches)
//   shared = static only, POG_GEMM_F32_SMEM_BYTES = 16896 bytes; dynamic 0.
// ===========================================================================
#define POG_GEMM_F32_BM 128
#define POG_GEMM_F32_BN 128
#define POG_GEMM_F32_BK 8
#define POG_GEMM_F32_THREADS 256
#define POG_GEMM_F32_LDS (POG_GEMM_F32_BM + 4) // padded k-major smem row (floats)
#define POG_GEMM_F32_SMEM_BYTES (2 * 2 * POG_GEMM_F32_BK * POG_GEMM_F32_LDS * 4)

// Global -> smem mapping: thread tid loads one float4 of A (and one of Bᵀ):
// tile row tid/2, k = 4·(tid%2)..+3, and stores it transposed (k-major) at
// s[k][row]. The row pad of 4 floats makes the transposed stores
// conflict-free (bank = 4·k + row mod 32) and keeps float4 alignment.
POG_HD unsigned pog_f32_ld_row(unsigned tid) {
	return tid >> 1;
}
POG_HD unsigned pog_f32_ld_k(unsigned tid) {
	return (tid & 1u) * 4u;
}
POG_HD unsigned long long pog_f32_ld_src(unsigned row, unsigned k, unsigned long long Kp,
	unsigned long long kt) {
	return (unsigned long long)row * Kp + kt * POG_GEMM_F32_BK + k;
}
// Compute mapping: thread (tx = tid%16, ty = tid/16) owns an 8×8 sub-tile:
// rows pog_f32_thread_row(ty, r), cols pog_f32_thread_col(tx, c), r, c in
// 0..7, i.e. two 4-wide groups 64 apart (so the float4 smem reads of a warp
// are broadcasts for A and 16 consecutive float4 for B).
POG_HD unsigned pog_f32_thread_row(unsigned ty, unsigned r) {
	return (r >> 2) * 64u + ty * 4u + (r & 3u);
}
POG_HD unsigned pog_f32_thread_col(unsigned tx, unsigned c) {
	return (c >> 2) * 64u + tx * 4u + (c & 3u);
}

// ===========================================================================
// pog_f32_to_tiles launch configuration:
//   block  = (POG_TO_TILES_THREADS, 1, 1) = (256, 1, 1)
//   grid   = any; the kernel grid-strides over x (float4 groups of one strip
//            of t rows, t·N/4 of them) and over y (strips, rows/t of them).
//            Suggested: x = min(ceil(t·N/4/256), 65535), y = min(rows/t, 65535).
//   shared = none.
// ===========================================================================
#define POG_TO_TILES_THREADS 256

// Source element (row-major, leading dimension N) of destination element
// I·t·N + e of the tile-major panel, e in [0, t·N): inside the strip of tile
// row I, e = J·t² + ii·t + jj, source row I·t + ii, column J·t + jj.
POG_HD unsigned long long pog_to_tiles_src(unsigned long long I, unsigned long long e,
	unsigned long long N, unsigned lt) {
	unsigned long long mask = (1ull << lt) - 1ull;
	unsigned long long J = e >> (2u * lt);
	unsigned long long ii = (e >> lt) & mask;
	unsigned long long jj = e & mask;
	return ((I << lt) + ii) * N + (J << lt) + jj;
}

// Block rasterisation shared by both GEMMs: the hardware starts blocks in
// linear order (x fastest); mapping that order onto groups of
// POG_GEMM_GROUP_M block rows, walked column by column inside a group, keeps
// the A panels of a group and the Bᵀ panels of a few columns in L2 while the
// blocks that reuse them run. A bijection of the gx×gy grid: linear block id
// pid = by·gx + bx goes to tile row *pm and tile column *pn.
#define POG_GEMM_GROUP_M 8u
POG_HD void pog_gemm_block_tile(unsigned bx, unsigned by, unsigned gx, unsigned gy,
	unsigned* pm, unsigned* pn) {
	unsigned pid = by * gx + bx;
	unsigned per_group = POG_GEMM_GROUP_M * gx; // blocks in a full group
	unsigned first_m = (pid / per_group) * POG_GEMM_GROUP_M;
	unsigned rows = gy - first_m < POG_GEMM_GROUP_M ? gy - first_m : POG_GEMM_GROUP_M;
	unsigned in_group = pid % per_group;
	*pm = first_m + in_group % rows;
	*pn = in_group / rows;
}

// log2 of the tile edge t (a power of two).
POG_HD unsigned pog_log2_u64(unsigned long long t) {
	unsigned l = 0;
	while ((1ull << l) < t) l++;
	return l;
}

// Tile-major output index of (b, i, j) for tile edge t = 2^lt (pog.cu).
POG_HD unsigned long long pog_tile_index(unsigned long long b, unsigned long long i,
	unsigned long long j, unsigned long long M, unsigned long long N, unsigned lt) {
	unsigned long long mask = (1ull << lt) - 1ull;
	unsigned long long tile = (b * (M >> lt) + (i >> lt)) * (N >> lt) + (j >> lt);
	return (tile << (2u * lt)) + ((i & mask) << lt) + (j & mask);
}

// ---- end of what is shared with the host simulation ----------------------

#ifdef __CUDACC__

__device__ __forceinline__ void pog_cp_async16(unsigned smem_addr, const void* gmem) {
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem)
		: "memory");
}
__device__ __forceinline__ void pog_cp_async_commit() {
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void pog_cp_async_wait() {
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void pog_ldmatrix_x4(unsigned (&r)[4], unsigned smem_addr) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		: "r"(smem_addr)
		: "memory"); // reads shared memory: keep it after the barrier
}
__device__ __forceinline__ void pog_ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2,
	unsigned& r3, unsigned smem_addr) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		: "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
		: "r"(smem_addr)
		: "memory"); // reads shared memory: keep it after the barrier
}
// d += a·b, m16n8k16, A row-major f16, B column-major f16, fp32 accumulate.
__device__ __forceinline__ void pog_mma_16816(float (&d)[4], const unsigned (&a)[4],
	const unsigned (&b)[2]) {
	asm volatile(
		"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// pog_gemm_f16: C_b = A_b · B_b for batch b = blockIdx.z on tensor cores.
// Launch: block (256,1,1); grid (Np/128, Mp/128, batches); 49152 bytes of
// static shared memory (3 stages × (A 128×32 + Bᵀ 128×32) halves), no
// dynamic shared memory. Each block computes a 128×128 tile of C; warp w
// computes rows pog_f16_warp_row(w)..+63, cols pog_f16_warp_col(w)..+31 of it
// as 4×4 mma tiles of 16×8. Block (x, y) computes the tile that
// pog_gemm_block_tile assigns (grouped rasterisation; the grid must be
// exactly Np/128 × Mp/128). Requires Kp % 32 == 0 (it is a multiple of 64).
extern "C" __global__ void __launch_bounds__(POG_GEMM_F16_THREADS, 2)
pog_gemm_f16(const __half* __restrict__ A, const __half* __restrict__ Bt, int* __restrict__ C,
	unsigned long long M, unsigned long long N, unsigned long long Kp, unsigned long long t) {
	__shared__ __align__(128) __half sA[POG_GEMM_F16_STAGES][POG_GEMM_F16_TILE];
	__shared__ __align__(128) __half sB[POG_GEMM_F16_STAGES][POG_GEMM_F16_TILE];

	const unsigned tid = threadIdx.x;
	const unsigned lane = tid & 31u;
	const unsigned warp = tid >> 5;
	const unsigned long long b = blockIdx.z;
	unsigned tm, tn;
	pog_gemm_block_tile(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, &tm, &tn);
	const unsigned long long m0 = (unsigned long long)tm * POG_GEMM_F16_BM;
	const unsigned long long n0 = (unsigned long long)tn * POG_GEMM_F16_BN;
	const unsigned long long Mp = pog_roundup(M, POG_PAD_MN);
	const unsigned long long Np = pog_roundup(N, POG_PAD_MN);
	const __half* gA = A + (b * Mp + m0) * Kp;
	const __half* gB = Bt + (b * Np + n0) * Kp;
	const unsigned KT = (unsigned)(Kp / POG_GEMM_F16_BK);

	const unsigned sA0 = (unsigned)__cvta_generic_to_shared(&sA[0][0]);
	const unsigned sB0 = (unsigned)__cvta_generic_to_shared(&sB[0][0]);
	const unsigned stage_bytes = POG_GEMM_F16_TILE * 2u;

	// Per-thread copy sources (k tile 0) and smem destinations (bytes).
	const __half* srcA[POG_GEMM_F16_LOADS];
	const __half* srcB[POG_GEMM_F16_LOADS];
	unsigned dst[POG_GEMM_F16_LOADS];
#pragma unroll
	for (unsigned q = 0; q < POG_GEMM_F16_LOADS; q++) {
		unsigned row = pog_f16_ld_row(tid, q), ch = pog_f16_ld_chunk(tid, q);
		srcA[q] = gA + pog_f16_ld_src(row, ch, Kp, 0);
		srcB[q] = gB + pog_f16_ld_src(row, ch, Kp, 0);
		dst[q] = pog_f16_smem_off(row, ch) * 2u;
	}

	float acc[POG_GEMM_F16_MT][POG_GEMM_F16_NT][4];
#pragma unroll
	for (int mt = 0; mt < POG_GEMM_F16_MT; mt++)
#pragma unroll
		for (int nt = 0; nt < POG_GEMM_F16_NT; nt++)
#pragma unroll
			for (int r = 0; r < 4; r++) acc[mt][nt][r] = 0.0f;

	const unsigned wrow = pog_f16_warp_row(warp);
	const unsigned wcol = pog_f16_warp_col(warp);

	// Prologue: k tiles 0..STAGES-2 into stages 0..STAGES-2, one group each.
#pragma unroll
	for (unsigned s = 0; s < POG_GEMM_F16_STAGES - 1; s++) {
		if (s < KT) {
			unsigned long long koff = (unsigned long long)s * POG_GEMM_F16_BK;
#pragma unroll
			for (unsigned q = 0; q < POG_GEMM_F16_LOADS; q++) {
				pog_cp_async16(sA0 + s * stage_bytes + dst[q], srcA[q] + koff);
				pog_cp_async16(sB0 + s * stage_bytes + dst[q], srcB[q] + koff);
			}
		}
		pog_cp_async_commit();
	}

	unsigned stage = 0; // kt % STAGES
	for (unsigned kt = 0; kt < KT; kt++) {
		// Groups committed so far: STAGES-1+kt; allowing STAGES-2 pending
		// means k tile kt (group kt) has landed for this thread; the barrier
		// makes every thread's copies visible and also guarantees all warps
		// are done reading stage (kt-1)%STAGES, which is refilled next.
		pog_cp_async_wait<POG_GEMM_F16_STAGES - 2>();
		__syncthreads();

		{
			unsigned nk = kt + POG_GEMM_F16_STAGES - 1;
			if (nk < KT) {
				unsigned ns = stage == 0 ? POG_GEMM_F16_STAGES - 1 : stage - 1; // nk % STAGES
				unsigned long long koff = (unsigned long long)nk * POG_GEMM_F16_BK;
#pragma unroll
				for (unsigned q = 0; q < POG_GEMM_F16_LOADS; q++) {
					pog_cp_async16(sA0 + ns * stage_bytes + dst[q], srcA[q] + koff);
					pog_cp_async16(sB0 + ns * stage_bytes + dst[q], srcB[q] + koff);
				}
			}
			pog_cp_async_commit(); // possibly empty: keeps the group count uniform
		}

		const unsigned a_base = sA0 + stage * stage_bytes;
		const unsigned b_base = sB0 + stage * stage_bytes;
#pragma unroll
		for (unsigned ks = 0; ks < POG_GEMM_F16_BK / 16; ks++) {
			unsigned af[POG_GEMM_F16_MT][4];
			unsigned bf[POG_GEMM_F16_NT][2];
#pragma unroll
			for (unsigned mt = 0; mt < POG_GEMM_F16_MT; mt++) {
				unsigned row = wrow + mt * 16u + pog_f16_ldm_a_row(lane);
				unsigned ch = ks * 2u + pog_f16_ldm_a_kchunk(lane);
				pog_ldmatrix_x4(af[mt], a_base + pog_f16_smem_off(row, ch) * 2u);
			}
#pragma unroll
			for (unsigned np = 0; np < POG_GEMM_F16_NT / 2; np++) {
				unsigned row = wcol + np * 16u + pog_f16_ldm_b_row(lane);
				unsigned ch = ks * 2u + pog_f16_ldm_b_kchunk(lane);
				pog_ldmatrix_x4(bf[2 * np][0], bf[2 * np][1], bf[2 * np + 1][0],
					bf[2 * np + 1][1], b_base + pog_f16_smem_off(row, ch) * 2u);
			}
#pragma unroll
			for (unsigned mt = 0; mt < POG_GEMM_F16_MT; mt++)
#pragma unroll
				for (unsigned nt = 0; nt < POG_GEMM_F16_NT; nt++)
					pog_mma_16816(acc[mt][nt], af[mt], bf[nt]);
		}
		stage = stage + 1 == POG_GEMM_F16_STAGES ? 0 : stage + 1;
	}
	pog_cp_async_wait<0>();

	// Epilogue: registers (c0,c1) and (c2,c3) are two adjacent columns
	// (even j) of one row; N % 16 == 0 and t >= 16, so the pair is both in or
	// both out of range, lies in one tile and is 8-byte aligned: one int2.
	const unsigned lt = pog_log2_u64(t);
#pragma unroll
	for (unsigned mt = 0; mt < POG_GEMM_F16_MT; mt++) {
#pragma unroll
		for (unsigned h = 0; h < 2; h++) {
			unsigned long long i = m0 + wrow + mt * 16u + pog_mma_c_row(lane, 2u * h);
			if (i >= M) continue;
#pragma unroll
			for (unsigned nt = 0; nt < POG_GEMM_F16_NT; nt++) {
				unsigned long long j = n0 + wcol + nt * 8u + pog_mma_c_col(lane, 2u * h);
				if (j >= N) continue;
				int2 v;
				v.x = __float2int_rn(acc[mt][nt][2 * h]);
				v.y = __float2int_rn(acc[mt][nt][2 * h + 1]);
				*reinterpret_cast<int2*>(C + pog_tile_index(b, i, j, M, N, lt)) = v;
			}
		}
	}
}

// pog_gemm_f32: C_b = A_b · B_b for batch b = blockIdx.z, exact fp32 FFMA.
// Launch: block (256,1,1); grid (Np/128, Mp/128, batches); 16896 bytes of
// static shared memory (2 buffers × (A + Bᵀ) × 8 k × 132 floats), no dynamic
// shared memory. Each block computes a 128×128 tile of C, each thread an 8×8
// sub-tile (pog_f32_thread_row/col). Block (x, y) computes the tile that
// pog_gemm_block_tile assigns (the grid must be exactly Np/128 × Mp/128).
// Requires Kp % 8 == 0.
extern "C" __global__ void __launch_bounds__(POG_GEMM_F32_THREADS, 2)
pog_gemm_f32(const float* __restrict__ A, const float* __restrict__ Bt, int* __restrict__ C,
	unsigned long long M, unsigned long long N, unsigned long long Kp, unsigned long long t) {
	__shared__ __align__(16) float sA[2][POG_GEMM_F32_BK][POG_GEMM_F32_LDS];
	__shared__ __align__(16) float sB[2][POG_GEMM_F32_BK][POG_GEMM_F32_LDS];

	const unsigned tid = threadIdx.x;
	const unsigned tx = tid & 15u, ty = tid >> 4;
	const unsigned long long b = blockIdx.z;
	unsigned tm, tn;
	pog_gemm_block_tile(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, &tm, &tn);
	const unsigned long long m0 = (unsigned long long)tm * POG_GEMM_F32_BM;
	const unsigned long long n0 = (unsigned long long)tn * POG_GEMM_F32_BN;
	const unsigned long long Mp = pog_roundup(M, POG_PAD_MN);
	const unsigned long long Np = pog_roundup(N, POG_PAD_MN);
	const unsigned KT = (unsigned)(Kp / POG_GEMM_F32_BK);

	const unsigned lrow = pog_f32_ld_row(tid), lk = pog_f32_ld_k(tid);
	const float* srcA = A + (b * Mp + m0) * Kp + pog_f32_ld_src(lrow, lk, Kp, 0);
	const float* srcB = Bt + (b * Np + n0) * Kp + pog_f32_ld_src(lrow, lk, Kp, 0);

	const unsigned r0 = pog_f32_thread_row(ty, 0), r4 = pog_f32_thread_row(ty, 4);
	const unsigned c0 = pog_f32_thread_col(tx, 0), c4 = pog_f32_thread_col(tx, 4);

	float acc[8][8];
#pragma unroll
	for (int r = 0; r < 8; r++)
#pragma unroll
		for (int c = 0; c < 8; c++) acc[r][c] = 0.0f;

	float4 ga = make_float4(0.f, 0.f, 0.f, 0.f), gb = ga;
	if (KT > 0) {
		ga = __ldg(reinterpret_cast<const float4*>(srcA));
		gb = __ldg(reinterpret_cast<const float4*>(srcB));
	}
	sA[0][lk + 0][lrow] = ga.x;
	sA[0][lk + 1][lrow] = ga.y;
	sA[0][lk + 2][lrow] = ga.z;
	sA[0][lk + 3][lrow] = ga.w;
	sB[0][lk + 0][lrow] = gb.x;
	sB[0][lk + 1][lrow] = gb.y;
	sB[0][lk + 2][lrow] = gb.z;
	sB[0][lk + 3][lrow] = gb.w;
	__syncthreads();

	unsigned cur = 0;
	for (unsigned kt = 0; kt < KT; kt++) {
		const bool more = kt + 1 < KT;
		if (more) {
			unsigned long long koff = (unsigned long long)(kt + 1) * POG_GEMM_F32_BK;
			ga = __ldg(reinterpret_cast<const float4*>(srcA + koff));
			gb = __ldg(reinterpret_cast<const float4*>(srcB + koff));
		}
#pragma unroll
		for (unsigned k = 0; k < POG_GEMM_F32_BK; k++) {
			float a[8], bv[8];
			float4 x = *reinterpret_cast<const float4*>(&sA[cur][k][r0]);
			float4 y = *reinterpret_cast<const float4*>(&sA[cur][k][r4]);
			a[0] = x.x; a[1] = x.y; a[2] = x.z; a[3] = x.w;
			a[4] = y.x; a[5] = y.y; a[6] = y.z; a[7] = y.w;
			x = *reinterpret_cast<const float4*>(&sB[cur][k][c0]);
			y = *reinterpret_cast<const float4*>(&sB[cur][k][c4]);
			bv[0] = x.x; bv[1] = x.y; bv[2] = x.z; bv[3] = x.w;
			bv[4] = y.x; bv[5] = y.y; bv[6] = y.z; bv[7] = y.w;
#pragma unroll
			for (int r = 0; r < 8; r++)
#pragma unroll
				for (int c = 0; c < 8; c++) acc[r][c] = fmaf(a[r], bv[c], acc[r][c]);
		}
		if (more) {
			// Buffer cur^1 was last read in iteration kt-1, which every thread
			// finished before the barrier that ended it.
			unsigned nb = cur ^ 1u;
			sA[nb][lk + 0][lrow] = ga.x;
			sA[nb][lk + 1][lrow] = ga.y;
			sA[nb][lk + 2][lrow] = ga.z;
			sA[nb][lk + 3][lrow] = ga.w;
			sB[nb][lk + 0][lrow] = gb.x;
			sB[nb][lk + 1][lrow] = gb.y;
			sB[nb][lk + 2][lrow] = gb.z;
			sB[nb][lk + 3][lrow] = gb.w;
		}
		__syncthreads();
		cur ^= 1u;
	}

	// Epilogue: 4 consecutive columns starting at a multiple of 4 lie in one
	// tile (t >= 16) and are 16-byte aligned; N % 16 == 0 so they are all in
	// or all out of range: one int4 per (row, column group).
	const unsigned lt = pog_log2_u64(t);
#pragma unroll
	for (unsigned r = 0; r < 8; r++) {
		unsigned long long i = m0 + pog_f32_thread_row(ty, r);
		if (i >= M) continue;
#pragma unroll
		for (unsigned cg = 0; cg < 2; cg++) {
			unsigned long long j = n0 + pog_f32_thread_col(tx, 4u * cg);
			if (j >= N) continue;
			int4 v;
			v.x = __float2int_rn(acc[r][4 * cg + 0]);
			v.y = __float2int_rn(acc[r][4 * cg + 1]);
			v.z = __float2int_rn(acc[r][4 * cg + 2]);
			v.w = __float2int_rn(acc[r][4 * cg + 3]);
			*reinterpret_cast<int4*>(C + pog_tile_index(b, i, j, M, N, lt)) = v;
		}
	}
}

// pog_f32_to_tiles: the row-major float panel Cf (rows × N, leading dimension
// N, the first `rows` rows of one batch, rows % t == 0) to tile-major int32 at
// C, which points at the panel's first output tile: panel element (i, j) goes
// to ((i/t)·(N/t) + j/t)·t² + (i%t)·t + j%t. M is unused (documentation only).
// Launch: block (256,1,1); any grid (grid-stride in x over the t·N/4 float4
// groups of a strip of t rows, in y over the rows/t strips); no shared memory.
// Each thread moves 4 consecutive destination elements, which are 4
// consecutive source elements of one row (t % 4 == 0): writes are fully
// coalesced, reads are contiguous runs of t floats (whole 32-byte sectors).
// Cf and C must be 16-byte aligned (C is offset by whole tiles).
extern "C" __global__ void __launch_bounds__(POG_TO_TILES_THREADS)
pog_f32_to_tiles(const float* __restrict__ Cf, int* __restrict__ C, unsigned long long M,
	unsigned long long N, unsigned long long t, unsigned long long rows) {
	(void)M;
	const unsigned lt = pog_log2_u64(t);
	const unsigned long long strip = N << lt; // t·N elements per tile row
	const unsigned long long groups = strip >> 2;
	const unsigned long long strips = rows >> lt;
	const unsigned long long xstart = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	const unsigned long long xstride = (unsigned long long)gridDim.x * blockDim.x;
	for (unsigned long long I = blockIdx.y; I < strips; I += gridDim.y) {
		const float* src = Cf;
		int* dst = C + I * strip;
		for (unsigned long long g = xstart; g < groups; g += xstride) {
			unsigned long long e = g << 2;
			float4 v = __ldcs(reinterpret_cast<const float4*>(src + pog_to_tiles_src(I, e, N, lt)));
			int4 o;
			o.x = __float2int_rn(v.x);
			o.y = __float2int_rn(v.y);
			o.z = __float2int_rn(v.z);
			o.w = __float2int_rn(v.w);
			__stcs(reinterpret_cast<int4*>(dst + e), o);
		}
	}
}

#endif // __CUDACC__
