// gen.cu: the challenge-matrix generator, bit-identical to proof.Line.
//
// pog_generate fills one padded input matrix (A, or Bᵀ: rows of Bᵀ are the
// columns of B) of every batch. The per-thread work is pog_gen_group in
// common.cuh, which the host simulation (kernels/cuda/hostsim) runs too.
#include <cuda_fp16.h>

#include "common.cuh"

// Threads per block of pog_generate.
//
// Launch: 1-D block of POG_GEN_THREADS threads, 1-D grid of any size (the
// kernel grid-strides); the natural grid is
// min(ceil(lines·kp/8 / POG_GEN_THREADS), 2^31-1) blocks, and a smaller one
// such as 64·SMs blocks works as well. No shared memory.
#define POG_GEN_THREADS 256

// pog_generate writes the padded matrix dst of `lines` rows by kp elements,
// row-major, __half if fp16 != 0 and float otherwise. dst must be 16-byte
// aligned and kp a multiple of 8 (it is one of POG_PAD_K).
//
// lines is the total padded row count, batch·roundup(lines_per_batch,
// POG_PAD_MN); padded row r is line r mod lpp of batch r / lpp. k is the
// unpadded line length. key = key0 | key1<<32 (the Philox key),
// salt_mat = salt | matrix<<32 (matrix 0 = A, 1 = B), vals = mask |
// off<<16 | scale<<32 (pog_pack_vals). Padding rows and columns are zero.
//
// One thread computes one group of 8 consecutive elements of a row, that is
// one Philox block, and stores it with one 16-byte store (fp16) or two
// (fp32). Group t covers elements 8t..8t+7 of the row-major matrix, since
// kp is a multiple of 8.
extern "C" __global__ void __launch_bounds__(POG_GEN_THREADS)
    pog_generate(void* dst, unsigned long long lines, unsigned long long lines_per_batch, unsigned long long k,
                 unsigned long long kp, unsigned long long key, unsigned long long salt_mat,
                 unsigned long long vals, unsigned long long fp16) {
	unsigned long long gpr = kp / POG_GEN_GROUP, total = lines * gpr;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
	     t += stride) {
		unsigned long long r, g;
		if (total >> 32 == 0) {
			r = (unsigned int)t / (unsigned int)gpr; // 32-bit division when it fits
		} else {
			r = t / gpr;
		}
		g = t - r * gpr;
		int v[8];
		pog_gen_group(v, r, g, lines_per_batch, k, key, salt_mat, vals);
		if (fp16) {
			uint4 o;
			o.x = (unsigned int)__half_as_ushort(__int2half_rn(v[0])) |
			      (unsigned int)__half_as_ushort(__int2half_rn(v[1])) << 16;
			o.y = (unsigned int)__half_as_ushort(__int2half_rn(v[2])) |
			      (unsigned int)__half_as_ushort(__int2half_rn(v[3])) << 16;
			o.z = (unsigned int)__half_as_ushort(__int2half_rn(v[4])) |
			      (unsigned int)__half_as_ushort(__int2half_rn(v[5])) << 16;
			o.w = (unsigned int)__half_as_ushort(__int2half_rn(v[6])) |
			      (unsigned int)__half_as_ushort(__int2half_rn(v[7])) << 16;
			((uint4*)dst)[t] = o;
		} else {
			float4* d = (float4*)dst + 2 * t;
			d[0] = make_float4((float)v[0], (float)v[1], (float)v[2], (float)v[3]);
			d[1] = make_float4((float)v[4], (float)v[5], (float)v[6], (float)v[7]);
		}
	}
}
