package cpu

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"lukechampine.com/blake3"
)

func runJob(t *testing.T, p proof.Params) (kernels.Job, []commit.CV) {
	t.Helper()
	be, err := kernels.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	var stages []kernels.Stage
	job, err := be.Start(p, kernels.Options{Workers: 3, Progress: func(s kernels.Stage, f float64) {
		if f == 1 && (len(stages) == 0 || stages[len(stages)-1] != s) {
			stages = append(stages, s)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := job.Generate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := job.Multiply(ctx); err != nil {
		t.Fatal(err)
	}
	cvs, err := job.TileCVs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join([]string{string(stages[0]), string(stages[len(stages)-2]), string(stages[len(stages)-1])}, ","); got != "generate,multiply,hash" {
		t.Errorf("progress reached 100%% for stages %v", stages)
	}
	return job, cvs
}

// The CPU backend's output is bit-identical to the naive reference, tile by
// tile, and its root is the BLAKE3 hash of the serialised output.
func TestJobMatchesReference(t *testing.T) {
	for _, tt := range []proof.Params{
		{Precision: proof.FP16, Batch: 2, M: 96, K: 200, N: 64, Tile: 32},
		{Precision: proof.FP32, Batch: 1, M: 64, K: 4096, N: 128, Tile: 16},
		{Precision: proof.FP16, Batch: 1, M: 256, K: 8192, N: 64, Tile: 64},
	} {
		p := tt
		p.Miner = []byte("m")
		job, cvs := runJob(t, p)
		g, _ := proof.NewGenerator(p)
		out := make([]byte, 0, p.OutputBytes())
		tile := make([]byte, p.TileBytes())
		want := make([]byte, p.TileBytes())
		for i := uint64(0); i < p.Tiles(); i++ {
			if err := job.Tile(i, tile); err != nil {
				t.Fatal(err)
			}
			proof.EncodeTile(want, proof.ReferenceTile(g, p, i))
			if string(tile) != string(want) {
				t.Fatalf("%v K=%d: tile %d differs from the reference", p.Precision, p.K, i)
			}
			if commit.TileCV(tile, i) != cvs[i] {
				t.Fatalf("tile %d: chaining value differs", i)
			}
			out = append(out, tile...)
		}
		root, _ := commit.Root(cvs)
		if root != commit.CV(blake3.Sum256(out)) {
			t.Fatal("root is not the BLAKE3 hash of the output")
		}
		job.Close()
	}
}

func TestJobErrors(t *testing.T) {
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 32, Miner: []byte("m")}
	be := Backend{}
	if _, err := be.Start(p, kernels.Options{MemoryLimit: 1024}); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Fatalf("memory limit: %v", err)
	}
	bad := p
	bad.K = 0
	if _, err := be.Start(bad, kernels.Options{}); err == nil {
		t.Fatal("invalid params accepted")
	}
	job, _ := be.Start(p, kernels.Options{})
	if err := job.Multiply(context.Background()); err == nil {
		t.Fatal("Multiply before Generate accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := job.Generate(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Generate: %v", err)
	}
	job.Generate(context.Background())
	job.Multiply(context.Background())
	if err := job.Tile(p.Tiles(), make([]byte, p.TileBytes())); err == nil {
		t.Fatal("out-of-range tile accepted")
	}
	if err := job.Tile(0, make([]byte, 10)); err == nil {
		t.Fatal("short tile buffer accepted")
	}
}
