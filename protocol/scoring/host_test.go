package scoring

import (
	"math"
	"testing"
)

// refHost is a measurement of the reference host (SPEC §18) in the host
// proofs' units: 96 chains at 2.4 GHz-equivalent each, 2 TB with random
// reads at 10.24 GB/s, 30 TB with block reads at 5242.88 MB/s.
func refHost() HostMeasurement {
	return HostMeasurement{CPUChains: 96, CPUStepsPerSecond: 96 * 2.4e9 / CPUCyclesPerStep,
		RAMBytes: 2e12, RAMBytesPerSecond: 10.24e9, StorageBytes: 30e12, StorageBytesPerSecond: 5242.88e6}
}

func TestHostMeasurementScores(t *testing.T) {
	score := func(m HostMeasurement) Score {
		return ScoreMiner(DefaultConfig(), Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: m.ProvenHost()})
	}
	half := HostMeasurement{CPUChains: 48, CPUStepsPerSecond: 48 * 2.4e9 / CPUCyclesPerStep,
		RAMBytes: 1e12, RAMBytesPerSecond: 5.12e9, StorageBytes: 15e12, StorageBytesPerSecond: 2621.44e6}
	cases := []struct {
		name              string
		m                 HostMeasurement
		cpu, ram, storage float64
	}{
		{"the reference host", refHost(), 1, 1, 1},
		{"two halves summed (two sockets, two disks)", half.Add(half), 1, 1, 1},
		{"half the reference", half, 0.5, 0.5, 0.5},
		{"twice the reference is capped", refHost().Add(refHost()), 1, 1, 1},
		// A GPU standing in for 96 cores: 96 chains at 230 ns per step,
		// credit 100/230 (SPEC §23.2).
		{"cpu-on-gpu", HostMeasurement{CPUChains: 96, CPUStepsPerSecond: 96 / 230e-9 * (100.0 / 230)}, 0.0499, 0, 0},
		{"nothing proven", HostMeasurement{}, 0, 0, 0},
		{"garbage", HostMeasurement{CPUChains: 4, CPUStepsPerSecond: math.NaN(), RAMBytes: -1, StorageBytes: math.Inf(1)}, 0, 0, 0},
	}
	for _, c := range cases {
		s := score(c.m)
		if math.Abs(s.CPU-c.cpu) > 1e-3 || math.Abs(s.RAM-c.ram) > 1e-9 || math.Abs(s.Storage-c.storage) > 1e-9 {
			t.Errorf("%s: cpu %v ram %v storage %v, want %v %v %v", c.name, s.CPU, s.RAM, s.Storage, c.cpu, c.ram, c.storage)
		}
	}
}
