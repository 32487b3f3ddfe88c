package cpu

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
)

// sgemmNT reports after each block of B: k = 4·blockK is four reports,
// rising to 1, whatever the worker count.
func TestSgemmProgress(t *testing.T) {
	for _, workers := range []int{1, 2} {
		m, n, k := 64, 64, 4*blockK
		a, bt, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
		var got []float64
		sgemmNT(m, n, k, a, k, bt, k, c, n, workers, func(f float64) { got = append(got, f) })
		if want := []float64{0.25, 0.5, 0.75, 1}; !slices.Equal(got, want) {
			t.Errorf("%d workers: progress %v, want %v", workers, got, want)
		}
	}
}

// Multiply's progress advances during the product, not only after it.
func TestMultiplyProgress(t *testing.T) {
	var mu sync.Mutex
	var got []float64
	opts := kernels.Options{Workers: 2, Progress: func(s kernels.Stage, f float64) {
		if s == kernels.StageMultiply {
			mu.Lock()
			got = append(got, f)
			mu.Unlock()
		}
	}}
	p := proof.Params{Precision: proof.FP32, Batch: 1, M: 128, K: 4 * blockK, N: 128, Tile: 32, Miner: []byte("m")}
	job, err := Backend{}.Start(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if err := job.Generate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := job.Multiply(context.Background()); err != nil {
		t.Fatal(err)
	}
	var during int
	for i, f := range got {
		if i > 0 && f < got[i-1] {
			t.Fatalf("progress went back: %v", got)
		}
		if f > 0 && f < gemmShare {
			during++
		}
	}
	if during < 3 || got[len(got)-1] != 1 {
		t.Fatalf("progress %v: want at least 3 reports inside the product and a final 1", got)
	}
}
