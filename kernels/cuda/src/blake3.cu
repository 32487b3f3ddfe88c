// blake3.cu: tile chaining values of the tile-major output on the GPU,
// bit-identical to commit.TileCVs.
//
// A tile of tileBytes (a power of two, 1 KiB..1 MiB) is tileBytes/1024 BLAKE3
// chunks; its chaining value is the non-root CV of the subtree over those
// chunks, whose first chunk counter is tile·tileBytes/1024. In a tile-major
// buffer that is simply: chunk c of the buffer has counter chunk_base + c,
// and tile i is the aligned subtree over chunks i·(tileBytes/1024)...
//
// How the Go side reaches tile CVs, with L = log2(tileBytes/1024):
//   1. g = min(L, POG_B3_THREADS_LOG2);
//      pog_chunk_cvs(data, cvs, nchunks, chunk_base, g) writes one CV per
//      2^g chunks (nchunks >> g CVs).
//   2. L - g times: pog_parent_cvs(cvs, next, n/2) halves the CV count n.
//      in and out must be distinct buffers (ping-pong between two): in place,
//      out[i] would overwrite in[i] while another thread may still read it.
//   The result is one 32-byte CV (8 little-endian words) per tile, in tile
//   order: the leaves commit.Root takes.
// nchunks must be a multiple of 2^g (it is: a whole number of tiles), data
// 16-byte aligned.
//
// Launch configs:
//   pog_chunk_cvs: block of exactly POG_B3_THREADS threads (the shared-memory
//     merge assumes it), 1-D grid of ceil(nchunks / POG_B3_THREADS) blocks or
//     fewer (it grid-strides in whole blocks). 8 KiB static shared memory.
//   pog_parent_cvs: block of POG_B3_THREADS threads, grid of
//     ceil(nout / POG_B3_THREADS) blocks or fewer (grid-stride). No shared
//     memory.
#include "common.cuh"

// pog_chunk_cvs hashes chunks [0, nchunks) of data, chunk c with counter
// chunk_base + c (one thread per chunk, reading its 1 KiB with 16-byte
// loads), merges each aligned run of 2^group_log2 chunk CVs into their
// subtree CV in shared memory (group_log2 <= POG_B3_THREADS_LOG2), and writes
// subtree CV j as words out[8j..8j+7].
extern "C" __global__ void __launch_bounds__(POG_B3_THREADS)
    pog_chunk_cvs(const unsigned char* __restrict__ data, unsigned int* __restrict__ out,
                  unsigned long long nchunks, unsigned long long chunk_base, unsigned long long group_log2) {
	// Word-major so that a thread's stores of its CV hit distinct banks.
	__shared__ unsigned int s[8][POG_B3_THREADS];
	const unsigned int tid = threadIdx.x, gl = (unsigned int)group_log2;
	const unsigned long long ngroups = nchunks >> gl;
	for (unsigned long long base = (unsigned long long)blockIdx.x * POG_B3_THREADS; base < nchunks;
	     base += (unsigned long long)gridDim.x * POG_B3_THREADS) {
		unsigned long long c = base + tid;
		unsigned int cv[8];
		if (c < nchunks) {
			pog_b3_chunk_cv(cv, data + c * POG_B3_CHUNK_LEN, chunk_base + c);
		} else {
#pragma unroll
			for (int w = 0; w < 8; w++) {
				cv[w] = 0;
			}
		}
#pragma unroll
		for (int w = 0; w < 8; w++) {
			s[w][tid] = cv[w];
		}
		__syncthreads();
		// Level l has POG_B3_THREADS >> l nodes; node i's children are nodes
		// 2i and 2i+1 of level l-1. Packing the active threads low keeps
		// whole warps idle rather than every warp partly idle.
		for (unsigned int l = 1; l <= gl; l++) {
			unsigned int n = POG_B3_THREADS >> l;
			unsigned int lc[8], rc[8];
			if (tid < n) {
#pragma unroll
				for (int w = 0; w < 8; w++) {
					lc[w] = s[w][2 * tid];
					rc[w] = s[w][2 * tid + 1];
				}
				pog_b3_parent_cv(cv, lc, rc);
			}
			__syncthreads();
			if (tid < n) {
#pragma unroll
				for (int w = 0; w < 8; w++) {
					s[w][tid] = cv[w];
				}
			}
			__syncthreads();
		}
		// cv now holds node tid of level gl (for tid < POG_B3_THREADS >> gl):
		// group (base >> gl) + tid.
		unsigned long long grp = (base >> gl) + tid;
		if (tid < (POG_B3_THREADS >> gl) && grp < ngroups) {
			uint4* o = (uint4*)(out + 8 * grp);
			o[0] = make_uint4(cv[0], cv[1], cv[2], cv[3]);
			o[1] = make_uint4(cv[4], cv[5], cv[6], cv[7]);
		}
		__syncthreads(); // s is reused by the next grid-stride step
	}
}

// pog_parent_cvs sets CV i of out to the parent of CVs 2i and 2i+1 of in, for
// i < nout (CVs are 8 little-endian words; in and out must not overlap).
extern "C" __global__ void __launch_bounds__(POG_B3_THREADS)
    pog_parent_cvs(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long nout) {
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < nout;
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		const uint4* q = (const uint4*)(in + 16 * i);
		uint4 a = __ldg(q), b = __ldg(q + 1), c = __ldg(q + 2), d = __ldg(q + 3);
		unsigned int lc[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
		unsigned int rc[8] = {c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w};
		unsigned int cv[8];
		pog_b3_parent_cv(cv, lc, rc);
		uint4* o = (uint4*)(out + 8 * i);
		o[0] = make_uint4(cv[0], cv[1], cv[2], cv[3]);
		o[1] = make_uint4(cv[4], cv[5], cv[6], cv[7]);
	}
}
