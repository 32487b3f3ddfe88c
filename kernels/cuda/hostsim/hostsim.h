// hostsim.h declares the host emulations of the CUDA kernels in ../src; see
// hostsim.c.
#ifndef POG_HOSTSIM_H
#define POG_HOSTSIM_H

#include <stdint.h>

void hs_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
uint64_t hs_pack_vals(uint32_t mask, uint32_t off, uint32_t scale);
void hs_gen_group(int32_t v[8], uint64_t r, uint64_t g, uint64_t lines_per_batch, uint64_t k, uint64_t key,
                  uint64_t salt_mat, uint64_t vals);
void hs_generate(void* dst, uint64_t lines, uint64_t lines_per_batch, uint64_t k, uint64_t kp, uint64_t key,
                 uint64_t salt_mat, uint64_t vals, uint64_t fp16);
void hs_chunk_cv(uint32_t cv[8], const unsigned char* chunk, uint64_t counter);
void hs_parent_cv(uint32_t cv[8], const uint32_t l[8], const uint32_t r[8]);
void hs_chunk_cvs(const unsigned char* data, uint32_t* out, uint64_t nchunks, uint64_t chunk_base,
                  uint64_t group_log2);
void hs_parent_cvs(const uint32_t* in, uint32_t* out, uint64_t nout);
int hs_b3_threads(void);
uint16_t hs_half_bits(int32_t v);

#endif
