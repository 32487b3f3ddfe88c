package testnet

import (
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/protocol/scoring"
)

// Simulated hosts (Config.Sim): in virtual time a host proof's real work
// takes no time, so each step takes what the profile's hardware takes for
// it, and validators measure the profile exactly.
const (
	// dramReadNs is a dependent DRAM read, the reference host's (SPEC §23.7).
	dramReadNs = 100
	// pageCacheReadNs is ram-on-disk's step: a pread from the page cache
	// (SPEC §23.9: 0.4–0.8 µs).
	pageCacheReadNs = 600
	// flashReadNs is a random block read from NVMe flash, the reference's.
	flashReadNs = 100_000
	// regenBlockNs is storage-regen's step: regenerating one of the
	// testnet's 4 KiB blocks of 64 rounds (SPEC §23.9).
	regenBlockNs = 1_200_000
)

// simHostTime is how long a host proof takes on profile p's host, played
// as adversary plays it, with load beside it (nil: none). Chains beyond
// the host's cores run in waves.
func simHostTime(p Profile, adversary string, load *cpuLoad) func(string, host.Shape) time.Duration {
	return func(kind string, sh host.Shape) time.Duration {
		step := 0.0 // ns per chain step
		switch kind {
		case "cpu":
			step = scoring.CPUCyclesPerStep / p.Host.CpuGhz * load.factor(time.Now())
		case "ram":
			step = dramReadNs
			if adversary == "ram-on-disk" {
				step = pageCacheReadNs
			}
		case "storage":
			step = flashReadNs
			if adversary == "storage-regen" {
				step = regenBlockNs
			}
		}
		cores := max(1, uint64(p.Host.CpuCores))
		waves := (sh.Chains + cores - 1) / cores
		return time.Duration(float64(waves*sh.Steps) * step)
	}
}
