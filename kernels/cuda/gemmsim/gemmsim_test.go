//go:build cgo

package gemmsim

import (
	"fmt"
	"math/rand"
	"testing"
)

func roundup(x, m uint64) uint64 { return (x + m - 1) / m * m }

// tileIndex is pog.cu's output layout, written independently of gemm.cu.
func tileIndex(b, i, j, m, n, t uint64) uint64 {
	return ((b*(m/t)+i/t)*(n/t)+j/t)*t*t + (i%t)*t + j%t
}

type shape struct{ m, n, k, t, batches uint64 }

var shapes = []shape{
	{256, 256, 128, 16, 1},
	{256, 256, 128, 64, 1},
	{128, 128, 64, 128, 2},
	{192, 320, 100, 64, 2}, // M, N not multiples of 128, K padded
	{144, 48, 37, 16, 1},
	{512, 512, 64, 512, 1},
	{256, 128, 256, 32, 3},
	{1408, 384, 64, 128, 1},  // 11 block rows: a full raster group and a partial one
	{1152, 1280, 64, 128, 1}, // 9 × 10 blocks
}

// operands fills padded A and Bᵀ with values in [alo, ahi] and [blo, bhi]
// (or ±1 when pm1), zero in the padding.
func operands(r *rand.Rand, s shape, alo, ahi, blo, bhi int, pm1 bool) (a, bt []float32, kp uint64) {
	mp, np := roundup(s.m, 128), roundup(s.n, 128)
	kp = roundup(s.k, 64)
	a = make([]float32, s.batches*mp*kp)
	bt = make([]float32, s.batches*np*kp)
	for b := uint64(0); b < s.batches; b++ {
		for i := uint64(0); i < s.m; i++ {
			for k := uint64(0); k < s.k; k++ {
				a[(b*mp+i)*kp+k] = float32(alo + r.Intn(ahi-alo+1))
			}
		}
		for j := uint64(0); j < s.n; j++ {
			for k := uint64(0); k < s.k; k++ {
				v := float32(blo + r.Intn(bhi-blo+1))
				if pm1 {
					v = float32(1 - 2*r.Intn(2))
				}
				bt[(b*np+j)*kp+k] = v
			}
		}
	}
	return a, bt, kp
}

func reference(a, bt []float32, s shape, kp uint64) []int32 {
	mp, np := roundup(s.m, 128), roundup(s.n, 128)
	c := make([]int32, s.batches*s.m*s.n)
	for b := uint64(0); b < s.batches; b++ {
		for i := uint64(0); i < s.m; i++ {
			for j := uint64(0); j < s.n; j++ {
				var sum int64
				for k := uint64(0); k < s.k; k++ {
					sum += int64(a[(b*mp+i)*kp+k]) * int64(bt[(b*np+j)*kp+k])
				}
				c[tileIndex(b, i, j, s.m, s.n, s.t)] = int32(sum)
			}
		}
	}
	return c
}

func check(t *testing.T, got, want []int32, f Faults) {
	t.Helper()
	if f != (Faults{}) {
		t.Errorf("faults: %+v", f)
	}
	bad := 0
	for x := range want {
		if got[x] != want[x] {
			if bad < 5 {
				t.Errorf("C[%d] = %d, want %d", x, got[x], want[x])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d outputs differ", bad, len(want))
	}
}

func sentinel(n uint64) []int32 {
	c := make([]int32, n)
	for x := range c {
		c[x] = -1 << 31
	}
	return c
}

func TestShapesValid(t *testing.T) {
	for _, s := range shapes {
		if s.t < 16 || s.t > 512 || s.t&(s.t-1) != 0 || s.m%s.t != 0 || s.n%s.t != 0 {
			t.Errorf("shape %+v: t must be a power of two in 16..512 dividing M and N", s)
		}
	}
}

func TestGemmF16(t *testing.T) {
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d_t%d_b%d", s.m, s.n, s.k, s.t, s.batches), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(s.m*s.n + s.k + s.t)))
			a, bt, kp := operands(r, s, -256, 255, -8, 7, false)
			c := sentinel(s.batches * s.m * s.n)
			f := GemmF16(a, bt, c, s.m, s.n, kp, s.t, s.batches)
			check(t, c, reference(a, bt, s, kp), f)
		})
	}
}

func TestGemmF32(t *testing.T) {
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d_t%d_b%d", s.m, s.n, s.k, s.t, s.batches), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(s.m*s.n + s.k + s.t + 1)))
			a, bt, kp := operands(r, s, -4096, 4095, 0, 0, true)
			c := sentinel(s.batches * s.m * s.n)
			f := GemmF32(a, bt, c, s.m, s.n, kp, s.t, s.batches)
			check(t, c, reference(a, bt, s, kp), f)
		})
	}
}

// Extreme values: the largest magnitudes of each class, so every partial sum
// is as large as the class allows for this K.
func TestGemmExtremes(t *testing.T) {
	s := shape{128, 128, 512, 32, 1}
	r := rand.New(rand.NewSource(7))
	a, bt, kp := operands(r, s, -256, -256, -8, -8, false)
	c := sentinel(s.m * s.n)
	check(t, c, reference(a, bt, s, kp), GemmF16(a, bt, c, s.m, s.n, kp, s.t, 1))
	a, bt, kp = operands(r, s, -4096, -4096, 0, 0, true)
	c = sentinel(s.m * s.n)
	check(t, c, reference(a, bt, s, kp), GemmF32(a, bt, c, s.m, s.n, kp, s.t, 1))
}

func TestF32ToTiles(t *testing.T) {
	cases := []struct {
		n, t, rows uint64
		gx, gy     uint
	}{
		{256, 16, 64, 1, 1},
		{256, 16, 64, 3, 2},
		{48, 16, 32, 2, 5},
		{320, 64, 128, 4, 1},
		{512, 512, 512, 7, 1},
		{96, 32, 96, 1, 2},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("n%d_t%d_rows%d_g%dx%d", tc.n, tc.t, tc.rows, tc.gx, tc.gy), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(tc.n + tc.t + tc.rows)))
			cf := make([]float32, tc.rows*tc.n)
			want := make([]int32, len(cf))
			for i := uint64(0); i < tc.rows; i++ {
				for j := uint64(0); j < tc.n; j++ {
					v := int32(r.Intn(1<<24) - 1<<23)
					cf[i*tc.n+j] = float32(v)
					want[tileIndex(0, i, j, tc.rows, tc.n, tc.t)] = v
				}
			}
			c := sentinel(uint64(len(cf)))
			check(t, c, want, F32ToTiles(cf, c, tc.rows, tc.n, tc.t, tc.rows, tc.gx, tc.gy))
		})
	}
}

func TestBlockTileBijection(t *testing.T) {
	for gy := uint(1); gy <= 40; gy++ {
		for gx := uint(1); gx <= 40; gx++ {
			if f := BlockTileFaults(gx, gy); f != 0 {
				t.Fatalf("grid %d×%d: %d faults", gx, gy, f)
			}
		}
	}
	for _, g := range [][2]uint{{512, 3}, {3, 513}, {1000, 17}, {129, 1031}} {
		if f := BlockTileFaults(g[0], g[1]); f != 0 {
			t.Fatalf("grid %d×%d: %d faults", g[0], g[1], f)
		}
	}
}
