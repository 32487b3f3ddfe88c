package miner

import (
	"math/rand/v2"
	"testing"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// TestProofBytesBoundsProofs: the memory a tile response reserves covers
// the batch proofs it then encodes, for any tree size and sample.
func TestProofBytesBoundsProofs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tiles := range []uint64{2, 3, 16, 17, 1000, 4096} {
		leaves := make([]commit.CV, tiles)
		for i := range leaves {
			leaves[i][0], leaves[i][1] = byte(i), byte(i>>8)
		}
		for trial := 0; trial < 20; trial++ {
			var idx []uint64
			for x := uint64(0); x < tiles; x++ {
				if r.IntN(4) == 0 {
					idx = append(idx, x)
				}
			}
			if len(idx) == 0 {
				idx = []uint64{tiles - 1}
			}
			pr, err := commit.Prove(leaves, idx)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := pr.MarshalBinary()
			if got, bound := len(b), proofBytes(tiles, []proof.Group{{Tiles: idx}}); got > bound {
				t.Fatalf("%d tiles, %d opened: proof %d bytes > reserved %d", tiles, len(idx), got, bound)
			}
		}
	}
}
