package cpu

import "unsafe"

// microKernel computes an mr×nr tile of C from packed panels:
//
//	c[i*ldc+j] (+)= sum_p a[p*mr+i] * b[p*nr+j]
//
// for 0<=i<mr, 0<=j<nr, 0<=p<k, adding to C when accumulate is set and
// overwriting it otherwise. k >= 1.
type microKernel struct {
	name   string
	mr, nr int
	fn     func(k int, a, b, c *float32, ldc int, accumulate bool)
}

// genericKernel is the portable fallback. A 4×4 tile is small enough for
// the compiler to keep the accumulators in registers on most Go targets.
var genericKernel = microKernel{name: "generic", mr: 4, nr: 4, fn: sgemmKernelGeneric}

func sgemmKernelGeneric(k int, a, b, c *float32, ldc int, accumulate bool) {
	ap := unsafe.Slice(a, 4*k)
	bp := unsafe.Slice(b, 4*k)
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	for p := 0; p < k; p++ {
		av := ap[4*p : 4*p+4 : 4*p+4]
		bv := bp[4*p : 4*p+4 : 4*p+4]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	cs := unsafe.Slice(c, 3*ldc+4)
	rows := [4][4]float32{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	for i, r := range rows {
		dst := cs[i*ldc : i*ldc+4 : i*ldc+4]
		if accumulate {
			dst[0] += r[0]
			dst[1] += r[1]
			dst[2] += r[2]
			dst[3] += r[3]
		} else {
			copy(dst, r[:])
		}
	}
}
