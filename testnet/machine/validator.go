package machine

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/testnet/adversary"
)

// A simulated validator checks tiles on the machine of BENCHMARKS.md
// "Verification speed": 2 cores (EPYC Zen 5, the avx512ifma kernel), each
// checking a sampled tile of the production step (K = 8192, 64 KiB
// tiles) in 417 µs, 66 tiles in 27.5 ms. The testnet's steps are
// smaller (validator.k 32), but a round samples as many tiles, so each
// check is charged as production's; host rounds' checks are not charged.
const (
	ValidatorCores    = 2
	TileCheckCoreTime = 417 * time.Microsecond
)

// CheckCPU is a simulated validator's CPU for node.Options.CheckCPU: its
// checks queue one after another, in miner order within an instant, each
// taking its tiles' core time spread over ValidatorCores.
func CheckCPU() func(ctx context.Context, miner peer.ID, tiles int) {
	// The device's rate is one "TFLOP" a core-second, so that a job's
	// "FLOPs" are its core time in picoseconds.
	cpu := adversary.NewSharedDevice(ValidatorCores).InVirtualTime(true)
	return func(ctx context.Context, miner peer.ID, tiles int) {
		cpu.Hold(ctx, float64(tiles)*float64(TileCheckCoreTime.Nanoseconds())*1e3, string(miner))
	}
}
