package testnet

import (
	"slices"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
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
	got, err := gpuHostProve(p)
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
