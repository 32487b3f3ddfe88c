package proof

import (
	"testing"

	"github.com/pog-network/pog/proof/sample"
)

// benchParams is pog bench's default challenge: 8192³ fp16 in 128² tiles.
func benchParams() Params {
	return Params{Precision: FP16, Batch: 1, M: 8192, K: 8192, N: 8192, Tile: 128, Miner: []byte("bench")}
}

// eachKernelB runs f once under every kernel, as sub-benchmarks.
func eachKernelB(b *testing.B, f func(b *testing.B)) {
	for _, name := range VerifyKernels() {
		b.Run(name, func(b *testing.B) {
			restore, err := SetVerifyKernel(name)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			f(b)
		})
	}
}

// BenchmarkLine generates one row of A at K = 8192.
func BenchmarkLine(b *testing.B) {
	p := benchParams()
	g, _ := NewGenerator(p)
	dst := make([]int32, p.K)
	eachKernelB(b, func(b *testing.B) {
		b.SetBytes(int64(4 * p.K))
		for i := 0; b.Loop(); i++ {
			Line(g, MatA, 0, uint32(i), dst)
		}
	})
}

// BenchmarkLineShort generates one row of A at K = 32, the simulated
// testnet's inner dimension, where a line is one kernel call: what it
// allocates is most of its cost.
func BenchmarkLineShort(b *testing.B) {
	p := benchParams()
	p.K = 32
	g, _ := NewGenerator(p)
	dst := make([]int32, p.K)
	eachKernelB(b, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(4 * p.K))
		for i := 0; b.Loop(); i++ {
			Line(g, MatA, 0, uint32(i), dst)
		}
	})
}

// BenchmarkCheckTile runs Freivalds' check on one honest tile of the bench
// challenge.
func BenchmarkCheckTile(b *testing.B) {
	p := benchParams()
	g, _ := NewGenerator(p)
	c := referenceGeneric(g, p, 7)
	r := make([]uint64, p.Tile)
	for i := range r {
		r[i] = uint64(i) * 0x9E3779B97F4A7C15 % p61
	}
	eachKernelB(b, func(b *testing.B) {
		for b.Loop() {
			if f := checkTile(g, p, 7, c, r); f != nil {
				b.Fatal(f)
			}
		}
	})
}

// BenchmarkCheckRound checks pog bench's 66 sampled tiles on the shared
// worker pool, grouped as a sample of that shape groups them (tiles of one
// batch and tile row share their rows of A): the exactness part of
// verifying the bench round, without the inclusion proof. Every tile is the
// same honest tile, so each group does a real group's work.
func BenchmarkCheckRound(b *testing.B) {
	p := benchParams()
	g, _ := NewGenerator(p)
	c := referenceGeneric(g, p, 7)
	r := make([]uint64, p.Tile)
	for i := range r {
		r[i] = uint64(i) * 0x9E3779B97F4A7C15 % p61
	}
	enc, _ := p.MarshalBinary()
	groups := shareGroups(p, sample.Indices([32]byte{1}, [32]byte{2}, enc, p.Tiles(), 66))
	eachKernelB(b, func(b *testing.B) {
		for b.Loop() {
			tilePool.run(len(groups), func(k int) {
				n := len(groups[k])
				idx, cs, rs := make([]uint64, n), make([][]int32, n), make([][]uint64, n)
				for j := range idx {
					idx[j], cs[j], rs[j] = 7, c, r
				}
				for _, f := range checkShared(g, p, idx, cs, rs) {
					if f != nil {
						b.Error(f)
					}
				}
			})
		}
	})
}
