package proof

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomTileCase is a tile of random parameters: t in 16..512, K in 1..MaxK
// (kept small enough at large t that the exact product stays cheap), a
// random tile position, an honest tile and a random Freivalds vector.
type tileCase struct {
	p   Params
	g   *Generator
	idx uint64
	c   []int32
	r   []uint64
}

func randomTileCase(rng *rand.Rand, maxWork int) tileCase {
	prec := []Precision{FP16, FP32}[rng.IntN(2)]
	t := uint32(MinTile) << rng.IntN(6)
	maxK := min(int(prec.MaxK()), max(1, maxWork/int(t*t)))
	k := uint32(1 + rng.IntN(maxK))
	if rng.IntN(4) == 0 {
		k = uint32(maxK) // the largest K this size allows, often MaxK
	}
	p := Params{Precision: prec, Batch: 1 + rng.Uint32N(3), M: t * (1 + rng.Uint32N(3)), K: k,
		N: t * (1 + rng.Uint32N(3)), Tile: t, Miner: []byte(fmt.Sprint(rng.Uint64()))}
	if p.Tiles() < 2 {
		p.N *= 2
	}
	for i := range p.Nonce {
		p.Nonce[i] = byte(rng.Uint32())
	}
	g, err := NewGenerator(p)
	if err != nil {
		panic(err)
	}
	idx := rng.Uint64N(p.Tiles())
	r := make([]uint64, t)
	for i := range r {
		r[i] = rng.Uint64N(p61)
	}
	if rng.IntN(8) == 0 {
		r[rng.IntN(len(r))] = p61 - 1 // the largest field element
	}
	return tileCase{p: p, g: g, idx: idx, c: referenceGeneric(g, p, idx), r: r}
}

// referenceGeneric is ReferenceTile under the generic kernel.
func referenceGeneric(g *Generator, p Params, idx uint64) []int32 {
	restore, _ := SetVerifyKernel("generic")
	defer restore()
	return ReferenceTile(g, p, idx)
}

// corrupt changes a random number of entries of c in one of the ways a
// miner gets them wrong: off by a little, by a lot, to zero, or every entry.
func corrupt(rng *rand.Rand, c []int32) {
	switch rng.IntN(5) {
	case 0:
		c[rng.IntN(len(c))]++
	case 1:
		for n := 1 + rng.IntN(8); n > 0; n-- {
			c[rng.IntN(len(c))] += int32(rng.Uint32())
		}
	case 2:
		row := rng.IntN(len(c))
		clear(c[row-row%16:][:16])
	case 3:
		c[rng.IntN(len(c))] = []int32{-1 << 31, 1<<31 - 1}[rng.IntN(2)]
	default:
		for i := range c {
			c[i] = int32(rng.Uint32())
		}
	}
}

// verdicts returns checkTile's verdict under every kernel.
func verdicts(t *testing.T, tc tileCase, c []int32) map[string]*Failure {
	t.Helper()
	out := map[string]*Failure{}
	for _, name := range VerifyKernels() {
		restore, err := SetVerifyKernel(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = checkTile(tc.g, tc.p, tc.idx, c, tc.r)
		restore()
	}
	return out
}

// sameVerdicts checks that every kernel's verdict equals generic's, and
// that an honest tile passes.
func sameVerdicts(t *testing.T, tc tileCase, c []int32, honest bool) {
	t.Helper()
	v := verdicts(t, tc, c)
	want := v["generic"]
	if honest && want != nil {
		t.Fatalf("%+v tile %d: honest tile fails: %v", tc.p, tc.idx, want)
	}
	for name, got := range v {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("t=%d K=%d %v tile %d: %s says %v, generic %v", tc.p.Tile, tc.p.K, tc.p.Precision, tc.idx, name, got, want)
		}
	}
}

func TestCheckTileKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := 0; i < n; i++ {
		tc := randomTileCase(rng, 1<<21)
		sameVerdicts(t, tc, tc.c, true)
		bad := append([]int32(nil), tc.c...)
		corrupt(rng, bad)
		sameVerdicts(t, tc, bad, false)
	}
}

// The sums of the vector kernels grow with the tile edge (y = B_J·r) and
// with K (each row of A against y; TestVecBounds states the bounds): honest
// tiles at MaxTile and at MaxK, with every r at p61−1, must pass every
// kernel, and extreme wrong values fail alike.
func TestCheckTileKernelsAtBounds(t *testing.T) {
	for _, prec := range []Precision{FP16, FP32} {
		for _, shape := range [][2]uint32{{MaxTile, 16}, {MinTile, prec.MaxK()}} {
			p := Params{Precision: prec, Batch: 1, M: shape[0], K: shape[1], N: 2 * shape[0], Tile: shape[0], Miner: []byte("bounds")}
			g, _ := NewGenerator(p)
			r := make([]uint64, p.Tile)
			for i := range r {
				r[i] = p61 - 1
			}
			tc := tileCase{p: p, g: g, idx: 1, c: referenceGeneric(g, p, 1), r: r}
			sameVerdicts(t, tc, tc.c, true)
			bad := append([]int32(nil), tc.c...)
			for i := len(bad) - int(p.Tile); i < len(bad); i++ {
				bad[i] = 1<<31 - 1
			}
			sameVerdicts(t, tc, bad, false)
		}
	}
}

// TestVecBounds restates the bounds the vector kernels rely on for every
// allowed parameter: each product of an entry and a 31-bit limb fits IFMA's
// 52 bits, and each sum fits 64 bits with room for the final combination.
func TestVecBounds(t *testing.T) {
	const limb = 1<<31 - 1
	for _, prec := range []Precision{FP16, FP32} {
		v := prec.values()
		aMax, bMax := uint64(v.aMask), uint64(v.bMask)
		if aMax*limb >= 1<<52 || bMax*limb >= 1<<52 {
			t.Errorf("%v: a product of an entry and a limb can exceed 2^52", prec)
		}
		// bside: per slot, one product per tile column.
		if hi, _ := bits.Mul64(MaxTile*bMax, limb); hi != 0 || MaxTile*bMax*limb >= 1<<58 {
			t.Errorf("%v: a slot of B_J·r can exceed 2^58", prec)
		}
		// aside: per row, one product per element of the line, over all
		// lanes; combine needs the limb-b sum below 2^(58+33).
		if hi, _ := bits.Mul64(uint64(prec.MaxK())*aMax, limb); hi != 0 || uint64(prec.MaxK())*aMax*limb >= 1<<60 {
			t.Errorf("%v: a row of A·y can exceed 2^60", prec)
		}
	}
}

func FuzzCheckTileKernels(f *testing.F) {
	f.Add(uint64(1), uint64(2), true)
	f.Add(uint64(5), uint64(0), false)
	f.Fuzz(func(t *testing.T, s1, s2 uint64, honest bool) {
		rng := rand.New(rand.NewPCG(s1, s2))
		tc := randomTileCase(rng, 1<<15)
		c := tc.c
		if !honest {
			c = append([]int32(nil), c...)
			corrupt(rng, c)
		}
		sameVerdicts(t, tc, c, honest)
	})
}

func FuzzLineKernels(f *testing.F) {
	f.Add(uint64(1), uint32(8), uint32(0), uint32(3), false)
	f.Fuzz(func(t *testing.T, seed uint64, k, b, idx uint32, fp32 bool) {
		prec := FP16
		if fp32 {
			prec = FP32
		}
		g := randomGenerator(rand.New(rand.NewPCG(seed, 0)), prec, 1+k%prec.MaxK())
		eachKernel(t, func(t *testing.T) {
			checkLine(t, g, MatA, b, idx)
			checkLine(t, g, MatB, b, idx)
		})
	})
}

// Tiles of one batch and tile row share their rows of A: checked together,
// under every kernel, each gets the verdict generic gives it alone, with
// some of them corrupted and groups larger than a kernel takes at once.
func TestCheckSharedKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for it := 0; it < 12; it++ {
		base := randomTileCase(rng, 1<<20)
		p := base.p
		p.N = p.Tile * uint32(2+rng.IntN(6))
		g, _ := NewGenerator(p)
		b, I, _ := p.TilePos(base.idx % p.Tiles())
		n := 1 + rng.IntN(6)
		idx, cs, rs := make([]uint64, n), make([][]int32, n), make([][]uint64, n)
		want := make([]*Failure, n)
		for j := range idx {
			J := rng.Uint64N(uint64(p.N / p.Tile))
			idx[j] = uint64(b)*p.TilesPerMatrix() + uint64(I)*uint64(p.N/p.Tile) + J
			cs[j] = referenceGeneric(g, p, idx[j])
			if rng.IntN(3) == 0 {
				corrupt(rng, cs[j])
			}
			rs[j] = make([]uint64, p.Tile)
			for i := range rs[j] {
				rs[j][i] = rng.Uint64N(p61)
			}
			restore, _ := SetVerifyKernel("generic")
			want[j] = checkTile(g, p, idx[j], cs[j], rs[j])
			restore()
		}
		eachKernel(t, func(t *testing.T) {
			if got := checkShared(g, p, idx, cs, rs); !reflect.DeepEqual(got, want) {
				t.Fatalf("t=%d K=%d %v tiles %v: shared verdicts %v, alone %v", p.Tile, p.K, p.Precision, idx, got, want)
			}
		})
	}
}

func TestShareGroups(t *testing.T) {
	p := Params{Precision: FP16, Batch: 2, M: 64, K: 8, N: 64, Tile: 16, Miner: []byte("m")}
	// Tiles 0-3 are batch 0 row 0, 4 is row 1, 16 batch 1 row 0.
	idx := []uint64{0, 4, 1, 16, 2, 3, 0, 17}
	got := shareGroups(p, idx)
	want := [][]int{{0, 2, 4, 5}, {1}, {3, 7}, {6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
}
