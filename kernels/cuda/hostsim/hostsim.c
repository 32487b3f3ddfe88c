// hostsim.c runs the kernels of ../src on the CPU: the same POG_HD functions
// from common.cuh, looped sequentially with the kernels' indexing (one
// "thread" at a time, barriers emulated by finishing each step for every
// thread before the next).
#include <string.h>

#include "common.cuh"
#include "hostsim.h"

void hs_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
	pog_u32x4 c;
	c.x = ctr[0];
	c.y = ctr[1];
	c.z = ctr[2];
	c.w = ctr[3];
	c = pog_philox(c, key[0], key[1]);
	out[0] = c.x;
	out[1] = c.y;
	out[2] = c.z;
	out[3] = c.w;
}

uint64_t hs_pack_vals(uint32_t mask, uint32_t off, uint32_t scale) { return pog_pack_vals(mask, off, scale); }

void hs_gen_group(int32_t v[8], uint64_t r, uint64_t g, uint64_t lines_per_batch, uint64_t k, uint64_t key,
                  uint64_t salt_mat, uint64_t vals) {
	int w[8];
	pog_gen_group(w, r, g, lines_per_batch, k, key, salt_mat, vals);
	for (int i = 0; i < 8; i++) {
		v[i] = w[i];
	}
}

// hs_generate is pog_generate with one thread: t runs over every group.
void hs_generate(void* dst, uint64_t lines, uint64_t lines_per_batch, uint64_t k, uint64_t kp, uint64_t key,
                 uint64_t salt_mat, uint64_t vals, uint64_t fp16) {
	unsigned long long gpr = kp / POG_GEN_GROUP, total = lines * gpr;
	for (unsigned long long t = 0; t < total; t++) {
		unsigned long long r = t / gpr, g = t - r * gpr;
		int v[8];
		pog_gen_group(v, r, g, lines_per_batch, k, key, salt_mat, vals);
		if (fp16) {
			unsigned short* d = (unsigned short*)dst + 8 * t;
			for (int l = 0; l < 8; l++) {
				d[l] = pog_half_bits(v[l]);
			}
		} else {
			float* d = (float*)dst + 8 * t;
			for (int l = 0; l < 8; l++) {
				d[l] = (float)v[l];
			}
		}
	}
}

void hs_chunk_cv(uint32_t cv[8], const unsigned char* chunk, uint64_t counter) {
	unsigned int c[8];
	pog_b3_chunk_cv(c, chunk, counter);
	for (int i = 0; i < 8; i++) {
		cv[i] = c[i];
	}
}

void hs_parent_cv(uint32_t cv[8], const uint32_t l[8], const uint32_t r[8]) {
	unsigned int a[8], b[8], c[8];
	for (int i = 0; i < 8; i++) {
		a[i] = l[i];
		b[i] = r[i];
	}
	pog_b3_parent_cv(c, a, b);
	for (int i = 0; i < 8; i++) {
		cv[i] = c[i];
	}
}

int hs_b3_threads(void) { return POG_B3_THREADS; }

uint16_t hs_half_bits(int32_t v) { return pog_half_bits(v); }

// hs_chunk_cvs is pog_chunk_cvs with a grid of one block: the block steps over
// the chunks POG_B3_THREADS at a time, as its grid-stride loop does.
void hs_chunk_cvs(const unsigned char* data, uint32_t* out, uint64_t nchunks, uint64_t chunk_base,
                  uint64_t group_log2) {
	unsigned int s[8][POG_B3_THREADS], cvs[POG_B3_THREADS][8];
	const unsigned int gl = (unsigned int)group_log2;
	const unsigned long long ngroups = nchunks >> gl;
	for (unsigned long long base = 0; base < nchunks; base += POG_B3_THREADS) {
		for (unsigned int tid = 0; tid < POG_B3_THREADS; tid++) {
			unsigned long long c = base + tid;
			unsigned int *cv = cvs[tid];
			if (c < nchunks) {
				pog_b3_chunk_cv(cv, data + c * POG_B3_CHUNK_LEN, chunk_base + c);
			} else {
				memset(cv, 0, 8 * sizeof cv[0]);
			}
			for (int w = 0; w < 8; w++) {
				s[w][tid] = cv[w];
			}
		}
		for (unsigned int l = 1; l <= gl; l++) {
			unsigned int n = POG_B3_THREADS >> l;
			for (unsigned int tid = 0; tid < n; tid++) {
				unsigned int lc[8], rc[8];
				for (int w = 0; w < 8; w++) {
					lc[w] = s[w][2 * tid];
					rc[w] = s[w][2 * tid + 1];
				}
				pog_b3_parent_cv(cvs[tid], lc, rc);
			}
			for (unsigned int tid = 0; tid < n; tid++) {
				for (int w = 0; w < 8; w++) {
					s[w][tid] = cvs[tid][w];
				}
			}
		}
		for (unsigned int tid = 0; tid < (unsigned int)(POG_B3_THREADS >> gl); tid++) {
			unsigned long long grp = (base >> gl) + tid;
			if (grp < ngroups) {
				memcpy(out + 8 * grp, cvs[tid], 8 * sizeof(uint32_t));
			}
		}
	}
}

void hs_parent_cvs(const uint32_t* in, uint32_t* out, uint64_t nout) {
	for (unsigned long long i = 0; i < nout; i++) {
		unsigned int lc[8], rc[8], cv[8];
		for (int w = 0; w < 8; w++) {
			lc[w] = in[16 * i + w];
			rc[w] = in[16 * i + 8 + w];
		}
		pog_b3_parent_cv(cv, lc, rc);
		memcpy(out + 8 * i, cv, sizeof cv);
	}
}
