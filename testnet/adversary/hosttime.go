package adversary

import (
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
)

// Simulated hosts (testnet.Config.Sim): in virtual time a host proof's real work
// takes no time, so each step takes what the profile's hardware takes for
// it, and validators measure the profile exactly.
const (
	// DRAMReadNs is a dependent DRAM read, the reference host's (SPEC §23.7).
	DRAMReadNs = 100
	// PageCacheReadNs is ram-on-disk's step: a pread from the page cache
	// (SPEC §23.9: 0.4–0.8 µs).
	PageCacheReadNs = 600
	// FlashReadNs is a random block read from NVMe flash, the reference's.
	FlashReadNs = 100_000
	// RegenBlockNs is storage-regen's step: regenerating one of the
	// testnet's 4 KiB blocks of 64 layers (SPEC §23.9).
	RegenBlockNs = 1_200_000
)

// HostTime is how long a host proof takes on the profile's host h, played
// as adversary plays it, with load beside it (nil: none). Chains beyond
// the host's cores run in waves.
func HostTime(h *pb.Hardware, adversary string, load *Load) func(string, host.Shape) time.Duration {
	return func(kind string, sh host.Shape) time.Duration {
		step := 0.0 // ns per chain step
		switch kind {
		case "cpu":
			step = scoring.CPUCyclesPerStep / h.CpuGhz * load.cpuFactor(time.Now())
		case "ram":
			step = DRAMReadNs
			if adversary == "ram-on-disk" {
				step = PageCacheReadNs
			}
		case "storage":
			step = FlashReadNs
			switch adversary {
			case "storage-regen":
				step = RegenBlockNs
			case "sparse-plot":
				step = SparsePlotNs()
			}
		}
		cores := max(1, uint64(h.CpuCores))
		waves := (sh.Chains + cores - 1) / cores
		return time.Duration(float64(waves*sh.Steps) * step)
	}
}

// HostWindow is the steps a chain the profile's host h runs of a windowed
// CPU round before stop, played as adversary plays it, with load beside
// it, and when they are done (miner.Hooks.HostWindow). cpu-on-gpu's steps
// take a GPU's time.
func HostWindow(h *pb.Hardware, adversary string, load *Load) func(*cpuwork.Params, time.Time) (uint64, time.Time) {
	return func(p *cpuwork.Params, stop time.Time) (uint64, time.Time) {
		now := time.Now()
		step := scoring.CPUCyclesPerStep / h.CpuGhz * load.cpuFactor(now)
		if adversary == "cpu-on-gpu" {
			step = gpuStepNs
		}
		return windowSteps(p, now, stop, step, max(1, uint64(h.CpuCores)))
	}
}

// windowSteps is the steps a chain of p's whole segments from start to
// stop at stepNs an unscaled step, cores chains at a time (the rest in
// waves), and when they end.
func windowSteps(p *cpuwork.Params, start, stop time.Time, stepNs float64, cores uint64) (uint64, time.Time) {
	waves := (p.Chains + cores - 1) / cores
	seg := max(time.Duration(float64(waves*p.Segment)*stepNs*p.Scale()), 1)
	segs := min(p.PerChain(), uint64(max(0, stop.Sub(start))/seg))
	return segs * p.Segment, start.Add(time.Duration(segs) * seg)
}
