package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// valueSet draws the integer operands. Every partial sum stays an exact
// integer below 2^24, so any summation order yields the same bits.
type valueSet struct {
	name     string
	aLo, aHi int // inclusive
	bVals    func(r *rand.Rand) float32
}

var valueSets = []valueSet{
	{name: "a256b8", aLo: -256, aHi: 255, bVals: func(r *rand.Rand) float32 { return float32(r.IntN(16) - 8) }},
	{name: "a4096b1", aLo: -4096, aHi: 4095, bVals: func(r *rand.Rand) float32 { return float32(2*r.IntN(2) - 1) }},
}

func randMatrix(r *rand.Rand, rows, cols, ld int, gen func() float32) []float32 {
	x := make([]float32, (rows-1)*ld+cols)
	for i := range x {
		// Padding between rows gets garbage that must never be read.
		x[i] = float32(1 << 20)
	}
	for i := range rows {
		for j := range cols {
			x[i*ld+j] = gen()
		}
	}
	return x
}

func (vs valueSet) operands(r *rand.Rand, m, n, k, lda, ldb int) (a, bt []float32) {
	a = randMatrix(r, m, k, lda, func() float32 { return float32(vs.aLo + r.IntN(vs.aHi-vs.aLo+1)) })
	bt = randMatrix(r, n, k, ldb, func() float32 { return vs.bVals(r) })
	return a, bt
}

func naiveNT(m, n, k int, a []float32, lda int, bt []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float32
			for p := range k {
				s += a[i*lda+p] * bt[j*ldb+p]
			}
			c[i*ldc+j] = s
		}
	}
}

// withKernel makes SgemmNT use mk for the rest of the test.
func withKernel(t testing.TB, mk microKernel) {
	old := kernel
	kernel = mk
	t.Cleanup(func() { kernel = old })
}

type shape struct{ m, n, k, lda, ldb, ldc int }

var shapes = []shape{
	{m: 1, n: 1, k: 1},
	{m: 1, n: 1, k: 1, lda: 3, ldb: 2, ldc: 5},
	{m: 2, n: 3, k: 1},
	{m: 17, n: 13, k: 7},
	{m: 13, n: 17, k: 7, lda: 9, ldb: 11, ldc: 20},
	{m: 5, n: 40, k: 33},   // m smaller than every MR
	{m: 40, n: 3, k: 33},   // n smaller than every NR
	{m: 14, n: 32, k: 256}, // exactly one AVX-512 tile and one k block
	{m: 6, n: 16, k: 4},    // exactly one AVX2 tile
	{m: 15, n: 33, k: 257}, // one past the AVX-512 tile and k block
	{m: 31, n: 65, k: 129},
	{m: 31, n: 65, k: 129, lda: 130, ldb: 131, ldc: 70},
	{m: 100, n: 1, k: 300},
	{m: 1, n: 100, k: 300},
	{m: 97, n: 103, k: 513},
	{m: 256, n: 256, k: 256},
	{m: 200, n: 700, k: 70, lda: 75, ldb: 71, ldc: 777}, // several n blocks
	{m: 1024, n: 512, k: 300},
	{m: 1024, n: 512, k: 300, lda: 301, ldb: 310, ldc: 515},
}

func TestSgemmNTMatchesNaive(t *testing.T) {
	for _, mk := range availableKernels() {
		t.Run(mk.name, func(t *testing.T) {
			withKernel(t, mk)
			for _, vs := range valueSets {
				for _, s := range shapes {
					s.lda, s.ldb, s.ldc = max(s.lda, s.k), max(s.ldb, s.k), max(s.ldc, s.n)
					for _, workers := range []int{1, 3} {
						name := fmt.Sprintf("%s/%dx%dx%d/ld=%d,%d,%d/w=%d", vs.name, s.m, s.n, s.k, s.lda, s.ldb, s.ldc, workers)
						t.Run(name, func(t *testing.T) { checkShape(t, vs, s, workers) })
					}
				}
			}
		})
	}
}

func checkShape(t *testing.T, vs valueSet, s shape, workers int) {
	r := rand.New(rand.NewPCG(uint64(s.m*1000003+s.n*1009+s.k), uint64(workers)))
	a, bt := vs.operands(r, s.m, s.n, s.k, s.lda, s.ldb)
	const sentinel = -12345
	want := make([]float32, (s.m-1)*s.ldc+s.n)
	got := make([]float32, len(want))
	for i := range got {
		want[i], got[i] = sentinel, sentinel
	}
	naiveNT(s.m, s.n, s.k, a, s.lda, bt, s.ldb, want, s.ldc)
	SgemmNT(s.m, s.n, s.k, a, s.lda, bt, s.ldb, got, s.ldc, workers)
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("C[%d][%d] = %v, want %v", i/s.ldc, i%s.ldc, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements differ", bad, len(want))
	}
}

func TestSgemmNTZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4, 5, 6}
	SgemmNT(2, 2, 0, nil, 0, nil, 0, c, 3, 1)
	want := []float32{0, 0, 3, 0, 0, 6}
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("c = %v, want %v", c, want)
		}
	}
}

func TestSgemmNTShortSlicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a short C")
		}
	}()
	SgemmNT(2, 2, 2, make([]float32, 4), 2, make([]float32, 4), 2, make([]float32, 3), 2, 1)
}

// benchOperands returns square integer operands so every implementation
// benchmarked on them produces the same bits.
func benchOperands(n int) (a, bt, c []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	a, bt = valueSets[0].operands(r, n, n, n, n, n)
	return a, bt, make([]float32, n*n)
}

func reportGFLOPS(b *testing.B, n int, elapsed time.Duration) {
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/elapsed.Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemmNT(b *testing.B) {
	for _, workers := range []int{0, 1} {
		for _, n := range []int{1024, 2048} {
			name := fmt.Sprintf("n=%d", n)
			if workers == 1 {
				name = "workers=1/" + name
			}
			b.Run(name, func(b *testing.B) {
				a, bt, c := benchOperands(n)
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					SgemmNT(n, n, n, a, n, bt, n, c, n, workers)
				}
				reportGFLOPS(b, n, time.Since(start))
			})
		}
	}
}
