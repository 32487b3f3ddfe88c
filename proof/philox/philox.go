// Package philox implements the Philox4x32-10 counter-based generator
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
//
// It is the only source of randomness for challenge matrices: any block of
// output is a pure function of (key, counter), so a validator can generate the
// few rows and columns it samples without generating the rest. The CUDA
// kernels implement the same function and share the test vectors in
// philox_test.go.
package philox

import "math/bits"

const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9 // golden ratio
	w1 = 0xBB67AE85 // sqrt(3) - 1
)

// Block returns the 128-bit output for counter ctr under key.
func Block(ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for i := 0; i < 10; i++ {
		hi0, lo0 := bits.Mul32(m0, c0)
		hi1, lo1 := bits.Mul32(m1, c2)
		c0, c1, c2, c3 = hi1^c1^k0, lo1, hi0^c3^k1, lo0
		k0 += w0
		k1 += w1
	}
	return [4]uint32{c0, c1, c2, c3}
}
