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
// (its proof verifies), and no chain step takes less than gpuStepNs.
func TestGPUHostProve(t *testing.T) {
	p := &cpuwork.Params{Miner: []byte("m"), TableLog: cpuwork.MinTableLog,
		Shape: host.Shape{Chains: 8, Steps: 1 << 12, Segment: 1 << 8}}
	want, err := cpuwork.Prove(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	got, err := GPUHostProve(p)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el < time.Duration(float64(p.Steps)*gpuStepNs) {
		t.Fatalf("%d steps per chain in %v: faster than %v ns per step", p.Steps, el, gpuStepNs)
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
