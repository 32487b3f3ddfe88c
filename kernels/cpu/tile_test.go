package cpu

import (
	"bytes"
	"context"
	"testing"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
)

// TestComputeTile: every recomputed tile equals the full job's, in both
// precisions and across batches; bad requests fail cleanly.
func TestComputeTile(t *testing.T) {
	for _, p := range []proof.Params{
		{Precision: proof.FP16, Batch: 2, M: 64, K: 100, N: 96, Tile: 32, Miner: []byte("m")},
		{Precision: proof.FP32, Batch: 1, M: 32, K: 64, N: 64, Tile: 16, Miner: []byte("m")},
	} {
		job, _ := runJob(t, p)
		want, got := make([]byte, p.TileBytes()), make([]byte, p.TileBytes())
		for i := uint64(0); i < p.Tiles(); i++ {
			if err := job.Tile(i, want); err != nil {
				t.Fatal(err)
			}
			if err := kernels.ComputeTile(context.Background(), Backend{}, p, i, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%v tile %d differs from the full product", p.Precision, i)
			}
		}
		job.Close()
		if err := (Backend{}).ComputeTile(context.Background(), p, p.Tiles(), got); err == nil {
			t.Error("tile out of range accepted")
		}
		if err := (Backend{}).ComputeTile(context.Background(), p, 0, got[1:]); err == nil {
			t.Error("short buffer accepted")
		}
	}
}
