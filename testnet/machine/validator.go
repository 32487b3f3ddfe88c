package machine

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/testnet/adversary"
)

// A simulated validator checks on the machine of BENCHMARKS.md
// "Verification speed": 2 cores (EPYC Zen 5, the avx512ifma kernel), each
// checking a sampled tile of the production step (K = 8192, 64 KiB
// tiles) in 417 µs, 66 tiles in 27.5 ms. The testnet's steps are
// smaller (validator.k 32), but a round samples as many tiles, so each
// check is charged as production's. Host rounds' checks likewise, a
// sampled segment at the node's sizes each (BENCHMARKS.md "Host checks
// charged", EPYC Zen 4): 16 CPU segments in 2.13 ms, 16 RAM segments in
// 18.8 ms, 16 storage segments in 6.53 ms.
const ValidatorCores = 2

// CheckCoreTime is a sampled tile's or segment's check, by CheckCPU kind.
var CheckCoreTime = map[byte]time.Duration{
	validator.CheckTiles: 417 * time.Microsecond,
	hostround.KindCPU:    133 * time.Microsecond,
	hostround.KindRAM:    1175 * time.Microsecond,
	hostround.KindPlot:   408 * time.Microsecond,
}

// CheckCPU is a simulated validator's CPU for node.Options.CheckCPU: its
// checks queue one after another, in miner order within an instant, each
// taking its samples' core time spread over ValidatorCores.
func CheckCPU() func(ctx context.Context, miner peer.ID, kind byte, n int) {
	// The device's rate is one "TFLOP" a core-second, so that a job's
	// "FLOPs" are its core time in picoseconds.
	cpu := adversary.NewSharedDevice(ValidatorCores).InVirtualTime(true)
	return func(ctx context.Context, miner peer.ID, kind byte, n int) {
		cpu.Hold(ctx, float64(n)*float64(CheckCoreTime[kind].Nanoseconds())*1e3, string(miner))
	}
}
