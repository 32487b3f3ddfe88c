package proof

import (
	"math/rand/v2"
	"testing"

	"github.com/pog-network/pog/proof/philox"
)

// eachKernel runs f once under every kernel this CPU has.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, name := range VerifyKernels() {
		t.Run(name, func(t *testing.T) {
			restore, err := SetVerifyKernel(name)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			f(t)
		})
	}
}

func TestVerifyKernels(t *testing.T) {
	names := VerifyKernels()
	if len(names) == 0 || names[len(names)-1] != "generic" {
		t.Fatalf("kernels %v: want generic last", names)
	}
	if activeKernel().name != names[0] {
		t.Fatalf("active kernel %s, want the first of %v", activeKernel().name, names)
	}
	restore, err := SetVerifyKernel("generic")
	if err != nil || activeKernel().name != "generic" {
		t.Fatalf("SetVerifyKernel(generic): %v, active %s", err, activeKernel().name)
	}
	restore()
	if activeKernel().name != names[0] {
		t.Fatalf("restore left %s active, want %s", activeKernel().name, names[0])
	}
	if _, err := SetVerifyKernel("sse9"); err == nil {
		t.Fatal("unknown kernel accepted")
	}
}

// lineRef is Line as SPEC.md states it, one philox.Block per 8 elements.
func lineRef(g *Generator, m Matrix, b, idx uint32) []int32 {
	mask, off, scale := g.vals.aMask, g.vals.aOff, int32(1)
	if m == MatB {
		mask, off, scale = g.vals.bMask, g.vals.bOff, g.vals.bScale
	}
	out := make([]int32, g.k)
	for p := range out {
		w := philox.Block([4]uint32{uint32(p / 8), idx, b<<1 | uint32(m), g.salt}, g.key)
		out[p] = scale*int32(w[p%8/2]>>(16*(p%2))&mask) - off
	}
	return out
}

// randomGenerator is a generator with a random key and K in 1..maxK.
func randomGenerator(rng *rand.Rand, prec Precision, k uint32) *Generator {
	return &Generator{
		key:  [2]uint32{rng.Uint32(), rng.Uint32()},
		salt: rng.Uint32(),
		vals: prec.values(),
		k:    k,
	}
}

// checkLine compares Line in every element type with lineRef.
func checkLine(t *testing.T, g *Generator, m Matrix, b, idx uint32) {
	t.Helper()
	want := lineRef(g, m, b, idx)
	got32 := make([]int32, g.k)
	Line(g, m, b, idx, got32)
	got16 := make([]int16, g.k+3) // longer than K: only K are written
	Line(g, m, b, idx, got16)
	gotF := make([]float32, g.k)
	Line(g, m, b, idx, gotF)
	for p, w := range want {
		if got32[p] != w || int32(got16[p]) != w || int32(gotF[p]) != w {
			t.Fatalf("%s K=%d m=%d b=%d idx=%d: element %d is %d/%d/%v, want %d",
				activeKernel().name, g.k, m, b, idx, p, got32[p], got16[p], gotF[p], w)
		}
	}
	for _, x := range got16[g.k:] {
		if x != 0 {
			t.Fatalf("Line wrote past K=%d", g.k)
		}
	}
}

func TestLineKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	eachKernel(t, func(t *testing.T) {
		for _, prec := range []Precision{FP16, FP32} {
			for _, k := range []uint32{1, 7, 8, 9, 63, 64, 65, 511, 512, 513, 1000, prec.MaxK()} {
				g := randomGenerator(rng, prec, k)
				checkLine(t, g, MatA, rng.Uint32N(MaxBatch), rng.Uint32())
				checkLine(t, g, MatB, rng.Uint32N(MaxBatch), rng.Uint32())
			}
		}
	})
}
