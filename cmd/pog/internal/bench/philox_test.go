package bench

import (
	"testing"

	"github.com/pog-network/pog/proof"
)

// BenchmarkPhilox is pog's Philox4x32-10 stream as the verifier draws it,
// proof.Line generating rows of A at K = 8192 (K/8 blocks of 16 bytes a
// row, each 16-bit half of a word one entry), under each verification
// kernel on one core. It reports GB/s of generated random bits, what
// make bench-philox prints beside numpy's Philox4x64-10
// (scripts/philox_ref.py).
func BenchmarkPhilox(b *testing.B) {
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 8192, K: 8192, N: 8192, Tile: 128, Miner: []byte(benchMiner)}
	g, err := proof.NewGenerator(p)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int32, p.K)
	drawn := float64(16 * ((p.K + 7) / 8)) // bytes of Philox output per row
	for _, name := range proof.VerifyKernels() {
		b.Run(name, func(b *testing.B) {
			restore, err := proof.SetVerifyKernel(name)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			row := uint32(0)
			for b.Loop() {
				proof.Line(g, proof.MatA, 0, row, dst)
				row++
			}
			b.ReportMetric(drawn*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
