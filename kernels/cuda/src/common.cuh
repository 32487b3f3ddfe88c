// common.cuh holds what the kernels share with the host simulation
// (kernels/cuda/hostsim): code here compiles both as CUDA C++ under nvcc and
// as plain C99 under gcc, so Go tests check it bit for bit against the Go
// implementation without a GPU.
//
// Every per-thread computation of gen.cu and blake3.cu is a POG_HD function
// here; the kernels only add indexing, shared memory and stores. Device-only
// details (__umulhi, funnel shifts, byte permutes, 16-byte vector loads) sit
// behind #ifdef __CUDA_ARCH__ with a host equivalent next to them.
#ifndef POG_COMMON_CUH
#define POG_COMMON_CUH

#ifdef __CUDACC__
#define POG_HD __host__ __device__ __forceinline__
#else
#include <stdint.h>
#define POG_HD static inline
#endif

// Loop-unrolling hints, for the device compiler only (host compilers would
// warn about the pragma).
#ifdef __CUDA_ARCH__
#define POG_NOUNROLL _Pragma("unroll 1")
#define POG_UNROLL _Pragma("unroll")
#else
#define POG_NOUNROLL
#define POG_UNROLL
#endif

// Input padding (see pog.cu): rows of A and Bᵀ to a multiple of POG_PAD_MN,
// the inner dimension to a multiple of POG_PAD_K.
#define POG_PAD_MN 128
#define POG_PAD_K 64

POG_HD unsigned long long pog_roundup(unsigned long long x, unsigned long long m) {
	return (x + m - 1) / m * m;
}

// ---------------------------------------------------------------------------
// Philox4x32-10, exactly proof/philox.Block.

#define POG_PHILOX_M0 0xD2511F53u
#define POG_PHILOX_M1 0xCD9E8D57u
#define POG_PHILOX_W0 0x9E3779B9u
#define POG_PHILOX_W1 0xBB67AE85u

typedef struct {
	unsigned int x, y, z, w;
} pog_u32x4;

POG_HD unsigned int pog_mulhi(unsigned int a, unsigned int b) {
#ifdef __CUDA_ARCH__
	return __umulhi(a, b);
#else
	return (unsigned int)(((unsigned long long)a * b) >> 32);
#endif
}

// pog_philox returns the block at counter c under key (k0, k1).
POG_HD pog_u32x4 pog_philox(pog_u32x4 c, unsigned int k0, unsigned int k1) {
	POG_UNROLL
	for (int i = 0; i < 10; i++) {
		unsigned int hi0 = pog_mulhi(POG_PHILOX_M0, c.x), lo0 = POG_PHILOX_M0 * c.x;
		unsigned int hi1 = pog_mulhi(POG_PHILOX_M1, c.z), lo1 = POG_PHILOX_M1 * c.z;
		pog_u32x4 n;
		n.x = hi1 ^ c.y ^ k0;
		n.y = lo1;
		n.z = hi0 ^ c.w ^ k1;
		n.w = lo0;
		c = n;
		k0 += POG_PHILOX_W0;
		k1 += POG_PHILOX_W1;
	}
	return c;
}

// ---------------------------------------------------------------------------
// Challenge generator, exactly proof.Line.
//
// Packed value set (the kernel's `vals` argument): mask in bits 0..15, off in
// bits 16..31, scale in bits 32..39; a raw 16-bit draw w maps to
// scale*(w&mask) - off.

#define POG_GEN_GROUP 8 // elements per Philox block, one thread's work

POG_HD unsigned long long pog_pack_vals(unsigned int mask, unsigned int off, unsigned int scale) {
	return (unsigned long long)(mask & 0xffffu) | (unsigned long long)(off & 0xffffu) << 16 |
	       (unsigned long long)(scale & 0xffu) << 32;
}

POG_HD int pog_val(unsigned int w, unsigned int mask, int off, int scale) {
	return scale * (int)(w & mask) - off;
}

// pog_gen_group computes elements 8g..8g+7 of padded row r of one matrix:
// the values pog_generate stores there. Rows are grouped per batch in
// lpp = roundup(lines_per_batch, POG_PAD_MN) padded rows: row r is line
// idx = r mod lpp of batch b = r / lpp. Padding (idx >= lines_per_batch or
// element >= k) is zero. Element p of a line comes from bits 16·(p mod 2) of
// word (p mod 8)/2 of the Philox block at counter (p/8, idx, 2b+matrix, salt)
// under key (key0, key1), with key = key0 | key1<<32 and
// salt_mat = salt | matrix<<32.
POG_HD void pog_gen_group(int v[8], unsigned long long r, unsigned long long g,
                          unsigned long long lines_per_batch, unsigned long long k,
                          unsigned long long key, unsigned long long salt_mat,
                          unsigned long long vals) {
	unsigned long long lpp = pog_roundup(lines_per_batch, POG_PAD_MN), b;
	if ((r | lpp) >> 32 == 0) {
		b = (unsigned int)r / (unsigned int)lpp; // 32-bit division: much cheaper on the device
	} else {
		b = r / lpp;
	}
	unsigned long long idx = r - b * lpp, p0 = g * POG_GEN_GROUP;
	POG_UNROLL
	for (int l = 0; l < 8; l++) {
		v[l] = 0;
	}
	if (idx >= lines_per_batch || p0 >= k) {
		return;
	}
	unsigned int mask = (unsigned int)(vals & 0xffffu);
	int off = (int)((vals >> 16) & 0xffffu), scale = (int)((vals >> 32) & 0xffu);
	pog_u32x4 c;
	c.x = (unsigned int)g;
	c.y = (unsigned int)idx;
	c.z = (unsigned int)b << 1 | (unsigned int)(salt_mat >> 32);
	c.w = (unsigned int)salt_mat;
	pog_u32x4 w = pog_philox(c, (unsigned int)key, (unsigned int)(key >> 32));
	v[0] = pog_val(w.x, mask, off, scale);
	v[1] = pog_val(w.x >> 16, mask, off, scale);
	v[2] = pog_val(w.y, mask, off, scale);
	v[3] = pog_val(w.y >> 16, mask, off, scale);
	v[4] = pog_val(w.z, mask, off, scale);
	v[5] = pog_val(w.z >> 16, mask, off, scale);
	v[6] = pog_val(w.w, mask, off, scale);
	v[7] = pog_val(w.w >> 16, mask, off, scale);
	if (p0 + 8 > k) {
		POG_UNROLL
	for (int l = 0; l < 8; l++) {
			if (p0 + (unsigned long long)l >= k) {
				v[l] = 0;
			}
		}
	}
}

// pog_half_bits returns the IEEE binary16 encoding of v, exact for
// |v| <= 2048 (every such integer is representable; larger ones are
// truncated, not rounded). The device converts with __int2half_rn instead;
// this is the host simulation's equivalent.
POG_HD unsigned short pog_half_bits(int v) {
	unsigned int s = 0, a = (unsigned int)v, e = 0;
	if (v == 0) {
		return 0;
	}
	if (v < 0) {
		s = 0x8000u;
		a = (unsigned int)(-v);
	}
	while ((a >> e) > 1) {
		e++;
	}
	unsigned int m = e <= 10 ? a << (10 - e) : a >> (e - 10);
	return (unsigned short)(s | (e + 15) << 10 | (m & 0x3ffu));
}

// ---------------------------------------------------------------------------
// BLAKE3: compression, chunk and parent chaining values (keyless hash mode,
// non-root nodes only; the root is finalised on the host by proof/commit).

#define POG_B3_CHUNK_START 1u
#define POG_B3_CHUNK_END 2u
#define POG_B3_PARENT 4u
#define POG_B3_CHUNK_LEN 1024
#define POG_B3_BLOCK_LEN 64

#define POG_B3_IV0 0x6A09E667u
#define POG_B3_IV1 0xBB67AE85u
#define POG_B3_IV2 0x3C6EF372u
#define POG_B3_IV3 0xA54FF53Au
#define POG_B3_IV4 0x510E527Fu
#define POG_B3_IV5 0x9B05688Cu
#define POG_B3_IV6 0x1F83D9ABu
#define POG_B3_IV7 0x5BE0CD19u

// Threads per block of pog_chunk_cvs, hence the largest subtree (in chunks)
// it merges in shared memory.
#define POG_B3_THREADS 256
#define POG_B3_THREADS_LOG2 8

// Rotations right. 16 and 8 are byte permutes (PRMT), 12 and 7 funnel
// shifts (SHF): one instruction each.
POG_HD unsigned int pog_rotr16(unsigned int x) {
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0, 0x1032);
#else
	return (x >> 16) | (x << 16);
#endif
}
POG_HD unsigned int pog_rotr8(unsigned int x) {
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0, 0x0321);
#else
	return (x >> 8) | (x << 24);
#endif
}
POG_HD unsigned int pog_rotr12(unsigned int x) {
#ifdef __CUDA_ARCH__
	return __funnelshift_r(x, x, 12);
#else
	return (x >> 12) | (x << 20);
#endif
}
POG_HD unsigned int pog_rotr7(unsigned int x) {
#ifdef __CUDA_ARCH__
	return __funnelshift_r(x, x, 7);
#else
	return (x >> 7) | (x << 25);
#endif
}

// The quarter-round on state words a, b, c, d with message words x, y.
#define POG_B3_G(a, b, c, d, x, y)       \
	do {                                 \
		a = a + b + (x);                 \
		d = pog_rotr16(d ^ a);           \
		c = c + d;                       \
		b = pog_rotr12(b ^ c);           \
		a = a + b + (y);                 \
		d = pog_rotr8(d ^ a);            \
		c = c + d;                       \
		b = pog_rotr7(b ^ c);            \
	} while (0)

// One round with the message words in the order of that round's schedule:
// m0..m15 are expressions (compile-time picks of message registers), so the
// permutation costs nothing at run time.
#define POG_B3_ROUND(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15) \
	do {                                                                                 \
		POG_B3_G(s0, s4, s8, s12, m0, m1);                                               \
		POG_B3_G(s1, s5, s9, s13, m2, m3);                                               \
		POG_B3_G(s2, s6, s10, s14, m4, m5);                                              \
		POG_B3_G(s3, s7, s11, s15, m6, m7);                                              \
		POG_B3_G(s0, s5, s10, s15, m8, m9);                                              \
		POG_B3_G(s1, s6, s11, s12, m10, m11);                                            \
		POG_B3_G(s2, s7, s8, s13, m12, m13);                                             \
		POG_B3_G(s3, s4, s9, s14, m14, m15);                                             \
	} while (0)

// pog_b3_compress compresses message block m (16 little-endian words) into
// chaining value cv in place: cv becomes the first half of the output
// (words 0..7 XOR words 8..15), which is all a non-root node needs.
POG_HD void pog_b3_compress(unsigned int cv[8], const unsigned int m[16], unsigned long long counter,
                            unsigned int block_len, unsigned int flags) {
	unsigned int s0 = cv[0], s1 = cv[1], s2 = cv[2], s3 = cv[3];
	unsigned int s4 = cv[4], s5 = cv[5], s6 = cv[6], s7 = cv[7];
	unsigned int s8 = POG_B3_IV0, s9 = POG_B3_IV1, s10 = POG_B3_IV2, s11 = POG_B3_IV3;
	unsigned int s12 = (unsigned int)counter, s13 = (unsigned int)(counter >> 32);
	unsigned int s14 = block_len, s15 = flags;
	// The schedule of round r is the message permutation applied r times.
	POG_B3_ROUND(m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12], m[13], m[14], m[15]);
	POG_B3_ROUND(m[2], m[6], m[3], m[10], m[7], m[0], m[4], m[13], m[1], m[11], m[12], m[5], m[9], m[14], m[15], m[8]);
	POG_B3_ROUND(m[3], m[4], m[10], m[12], m[13], m[2], m[7], m[14], m[6], m[5], m[9], m[0], m[11], m[15], m[8], m[1]);
	POG_B3_ROUND(m[10], m[7], m[12], m[9], m[14], m[3], m[13], m[15], m[4], m[0], m[11], m[2], m[5], m[8], m[1], m[6]);
	POG_B3_ROUND(m[12], m[13], m[9], m[11], m[15], m[10], m[14], m[8], m[7], m[2], m[5], m[3], m[0], m[1], m[6], m[4]);
	POG_B3_ROUND(m[9], m[14], m[11], m[5], m[8], m[12], m[15], m[1], m[13], m[3], m[0], m[10], m[2], m[6], m[4], m[7]);
	POG_B3_ROUND(m[11], m[15], m[5], m[0], m[1], m[9], m[8], m[6], m[14], m[10], m[2], m[12], m[3], m[4], m[7], m[13]);
	cv[0] = s0 ^ s8;
	cv[1] = s1 ^ s9;
	cv[2] = s2 ^ s10;
	cv[3] = s3 ^ s11;
	cv[4] = s4 ^ s12;
	cv[5] = s5 ^ s13;
	cv[6] = s6 ^ s14;
	cv[7] = s7 ^ s15;
}

POG_HD void pog_b3_iv(unsigned int cv[8]) {
	cv[0] = POG_B3_IV0;
	cv[1] = POG_B3_IV1;
	cv[2] = POG_B3_IV2;
	cv[3] = POG_B3_IV3;
	cv[4] = POG_B3_IV4;
	cv[5] = POG_B3_IV5;
	cv[6] = POG_B3_IV6;
	cv[7] = POG_B3_IV7;
}

// pog_b3_load_block reads the 64-byte block at p as 16 little-endian words:
// four 16-byte loads on the device (p must be 16-byte aligned), bytes on the
// host.
POG_HD void pog_b3_load_block(unsigned int m[16], const unsigned char* p) {
#ifdef __CUDA_ARCH__
	const uint4* q = (const uint4*)p;
	uint4 a = __ldg(q), b = __ldg(q + 1), c = __ldg(q + 2), d = __ldg(q + 3);
	m[0] = a.x, m[1] = a.y, m[2] = a.z, m[3] = a.w;
	m[4] = b.x, m[5] = b.y, m[6] = b.z, m[7] = b.w;
	m[8] = c.x, m[9] = c.y, m[10] = c.z, m[11] = c.w;
	m[12] = d.x, m[13] = d.y, m[14] = d.z, m[15] = d.w;
#else
	for (int i = 0; i < 16; i++) {
		m[i] = (unsigned int)p[4 * i] | (unsigned int)p[4 * i + 1] << 8 | (unsigned int)p[4 * i + 2] << 16 |
		       (unsigned int)p[4 * i + 3] << 24;
	}
#endif
}

// pog_b3_chunk_cv sets cv to the chaining value of the full 1024-byte chunk
// at p with chunk counter counter (non-root). The next block's loads are
// issued before the current block is compressed, so their latency hides
// behind the ALU work.
POG_HD void pog_b3_chunk_cv(unsigned int cv[8], const unsigned char* p, unsigned long long counter) {
	unsigned int m[16], next[16];
	pog_b3_iv(cv);
	pog_b3_load_block(next, p);
	POG_NOUNROLL
	for (int j = 0; j < 16; j++) {
		POG_UNROLL
		for (int i = 0; i < 16; i++) {
			m[i] = next[i];
		}
		if (j < 15) {
			pog_b3_load_block(next, p + (j + 1) * POG_B3_BLOCK_LEN);
		}
		unsigned int flags = (j == 0 ? POG_B3_CHUNK_START : 0u) | (j == 15 ? POG_B3_CHUNK_END : 0u);
		pog_b3_compress(cv, m, counter, POG_B3_BLOCK_LEN, flags);
	}
}

// pog_b3_parent_cv sets cv to the chaining value of the non-root parent of
// children l and r.
POG_HD void pog_b3_parent_cv(unsigned int cv[8], const unsigned int l[8], const unsigned int r[8]) {
	unsigned int m[16];
	POG_UNROLL
	for (int i = 0; i < 8; i++) {
		m[i] = l[i];
		m[i + 8] = r[i];
	}
	pog_b3_iv(cv);
	pog_b3_compress(cv, m, 0, POG_B3_BLOCK_LEN, POG_B3_PARENT);
}

#endif
