package adversary

import (
	"slices"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/plot"
)

// TestGPUHostProve: the cpu-on-gpu adversary's states are the honest ones
// (its proof verifies) for the whole segments that fit its run, and no
// chain step takes less than gpuStepNs.
func TestGPUHostProve(t *testing.T) {
	p := &cpuwork.Params{Miner: []byte("m"), TableLog: cpuwork.MinTableLog, WindowMs: 50, RunMs: 50,
		Shape: host.Shape{Chains: 8, Steps: 1 << 20, Segment: 1 << 8}}
	t0 := time.Now()
	run := 20 * time.Millisecond
	n, got, err := GPUHostProve(p, t0.Add(run))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < time.Duration(float64(n)*gpuStepNs) {
		t.Fatalf("%d steps per chain in %v: faster than %v ns per step", n, el, gpuStepNs)
	}
	if seg := float64(p.Segment) * gpuStepNs; float64(n)*gpuStepNs > float64(run) || float64(n)*gpuStepNs+seg <= float64(run) {
		t.Fatalf("%d steps a chain of %v ns in a %v run: not its whole segments", n, gpuStepNs, run)
	}
	q, err := p.Proven(n)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpuwork.Prove(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatal("states differ from cpuwork.Prove")
	}
}

// TestSlowRegen: the storage-regen adversary's reads give a regeneration's
// bytes and take at least a regeneration's time.
func TestSlowRegen(t *testing.T) {
	const plotBlockLog, plotRounds = 12, 64 // the testnet's plots
	p := &plot.Plot{Miner: []byte("m"), BlockLog: plotBlockLog, Rounds: plotRounds, Blocks: 8}
	cost := RegenCost(p)
	r := SlowRegen{Reader: plot.Regenerator{Plot: p}, Cost: 20 * cost}
	got, want := make([]byte, p.BlockBytes()), make([]byte, p.BlockBytes())
	t0 := time.Now()
	if err := r.ReadBlock(5, got); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < r.Cost {
		t.Fatalf("read in %v, faster than its cost %v", el, r.Cost)
	}
	p.Generate(5, want)
	if !slices.Equal(got, want) {
		t.Fatal("block differs from its regeneration")
	}
	if cost <= 0 || r.ReadBlock(8, got) == nil {
		t.Fatalf("cost %v; a read past the plot did not fail", cost)
	}
}
