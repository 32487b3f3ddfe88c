package adversary

import (
	"time"

	"github.com/pog-network/pog/proof/host"
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
