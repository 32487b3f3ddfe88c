// Package scaled is the testnet's node and scoring configuration: the
// local profile with a run's epoch length, shorter rounds and deadlines a
// 2-core machine meets, and the scoring reference scaled to the
// simulated hardware, so that simulated throughput scores like the real
// hardware it stands for. It also states, for the report, each setting
// against production (Settings, HostScaleNote).
package scaled

import (
	"slices"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/machine"
)

// Params are what a run's configurations follow from (testnet.Config's
// fields of the same names).
type Params struct {
	EpochLength time.Duration
	Epochs      int      // full epochs run: evidence is kept for all of them
	Validators  []string // network.validators (the slot schedule); nil: none
	// RoundInterval, DutyCycle and HostMaxRound replace the testnet's
	// own values when set.
	RoundInterval time.Duration
	DutyCycle     float64
	HostMaxRound  time.Duration
	SlotSchedule  bool
	Scale         float64 // simulated TFLOPS per real one
	Sim           bool    // virtual time: hosts are simulated too
	// RAMPeriodEpochs, if set, replaces the testnet's RAM period (so
	// that a run crosses a period boundary).
	RAMPeriodEpochs uint64
	Miners          int // honest miners the run starts (testnet.Config.Miners)
	// ProductionTiming (with Sim) runs every timing setting at
	// production's: round targets and steps, slots, deadlines, host
	// rounds and windows, announces, proof windows and TTLs.
	ProductionTiming bool
}

// Node is the local profile with the run's epoch length and a deadline
// the slowest simulated profile meets.
func (p Params) Node() config.Config {
	c := config.LocalConfig()
	c.Node.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	c.Network.EpochLength = config.Duration{Duration: p.EpochLength}
	c.Network.Validators = slices.Clone(p.Validators)
	c.Validator.Deadline = config.Duration{Duration: 10 * time.Second}
	c.Validator.ProofTimeout = config.Duration{Duration: 10 * time.Second}
	c.Validator.MinerTTL = config.Duration{Duration: 30 * time.Second}
	// Above the tens of miners a testnet runs: the swarm adversary's
	// identities past it get no slots, and the few it admits cost no-show
	// records in proportion to the network, not to production's cap.
	// A scale run's miners (and its adversaries, fewer than 32) all fit.
	c.Validator.MaxMiners = max(64, p.Miners+32)
	// The public audits run after the last epoch while the network goes on,
	// and fetch every validator's evidence from its first record: keep it
	// for the whole run (the audits take up to two epochs on 2 cores), so
	// that every audit recomputes every epoch (a validator that pruned is
	// audited from its checkpoint, SPEC §22.3, recomputing fewer).
	c.Node.RetainEvidence = p.Epochs + 4
	// A short inner dimension keeps the simulated CPU miner's probe (22
	// steps) within the deadline.
	c.Validator.K = 32
	// Rounds of 22 steps of about 45 ms. The slot schedule keeps every
	// miner under some validator's round in 95 % of its 1.25 s slots; on
	// the machine's two shared cores that takes about 1.5 of them for
	// the full network. Without it, each validator keeps a miner under
	// its rounds 10 % of the time, at random times.
	c.Validator.RoundTarget = config.Duration{Duration: time.Second}
	// A CPU miner's rounds keep production's 2 s: the simulated CPU's
	// least round (22 steps of the least step, 1.6 s at its scaled speed)
	// overran 1 s rounds in 1.25 s slots, and its probes (6.3 s) more, so
	// at 16 validators its overlapping rounds filled queue_length and it
	// refused one in eight.
	c.Validator.RoundTargetCPU = config.DefaultConfig().Validator.RoundTargetCPU
	c.Validator.DutyCycle = 0.1
	if p.SlotSchedule {
		c.Validator.DutyCycle = 0.95
	}
	if p.DutyCycle > 0 {
		c.Validator.DutyCycle = min(1, p.DutyCycle)
	}
	c.Miner.Workers = 1
	// One chain per CPU host round: miners prove with one worker on cores
	// every node shares, so more chains would only measure the queue.
	c.Validator.HostCPUMaxChains = 1
	// In virtual time, CPU rounds run to a window of the GPU round
	// target (production's 2 s window is a fifth of its 10 s target; a
	// window past the testnet's 1.25 s host slots would run into the next
	// slot's rounds), with a step that counts as CPUScaleLog (its
	// simulated host takes that many times a step's time): 2^15 real
	// steps a window, not 2^25. On the wall clock, the local profile's
	// short window.
	if p.Sim {
		c.Validator.HostCPUWindow, c.Validator.HostCPUScaleLog = c.Validator.RoundTarget, CPUScaleLog
		c.Validator.TileBytes = SimTileBytes
	}
	machine.HostConfig(&c)
	if p.Sim {
		// In virtual time a round trip is exact, so only a distant
		// miner's host rounds grow: to production's cap scaled as the
		// round target is (1 s of 10 s), so that its host sets take the
		// share of its slots they take in production.
		prod := config.DefaultConfig().Validator
		scale := c.Validator.RoundTarget.Seconds() / prod.RoundTarget.Seconds()
		c.Validator.HostMaxRound = config.Duration{Duration: time.Duration(scale * float64(prod.HostMaxRound.Duration))}
	}
	if p.Sim && p.ProductionTiming {
		productionTiming(&c)
	}
	if p.RAMPeriodEpochs > 0 {
		c.Network.RAMPeriodEpochs = p.RAMPeriodEpochs
	}
	if p.RoundInterval > 0 {
		c.Validator.RoundInterval = config.Duration{Duration: p.RoundInterval}
	}
	if p.HostMaxRound > 0 {
		c.Validator.HostMaxRound, c.Validator.HostRounds = config.Duration{Duration: p.HostMaxRound}, 1
	}
	return c
}

// productionTiming sets every timing setting of c to production's.
func productionTiming(c *config.Config) {
	prod := config.DefaultConfig()
	v, pv := &c.Validator, prod.Validator
	v.RoundInterval, v.RoundTarget, v.RoundTargetCPU = pv.RoundInterval, pv.RoundTarget, pv.RoundTargetCPU
	v.MinSteps, v.MaxSteps, v.FirstRootSlack = pv.MinSteps, pv.MaxSteps, pv.FirstRootSlack
	v.Deadline, v.ProofTimeout, v.MinerTTL = pv.Deadline, pv.ProofTimeout, pv.MinerTTL
	v.HostCPUWindow, v.HostMaxRound = pv.HostCPUWindow, pv.HostMaxRound
	c.Miner.AnnounceInterval, c.Miner.ProofWindow = prod.Miner.AnnounceInterval, prod.Miner.ProofWindow
}

// SimTileBytes is a simulated run's tile: 16×16 output values. A check
// is charged a production tile's core time whatever its size
// (machine.CheckCoreTime), so only the bytes a round sends, hashes and
// recomputes shrink: at the local profile's 16 KiB, QUIC and the
// validators' tile checks took a third of a 300-miner run's CPU. Small
// tiles cost miners memory: each holds a chaining value a tile for its
// rounds' proof windows, 0.9 GB over 300 miners. 4 KiB tiles held a
// quarter of that, but `far` failed a round in the full run with them
// (not traced; BENCHMARKS.md).
const SimTileBytes = 1 << 10

// CPUScaleLog is the simulation's CPU step scale: a simulated step counts
// as 2^10 real ones (validator.host_cpu_scale_log).
const CPUScaleLog = 10

// Scoring scales the reference and GPU classes by the run's scale so
// simulated throughput scores like the real hardware it stands for.
func (p Params) Scoring() scoring.Config {
	c := scoring.DefaultConfig()
	c.Reference.GPUFP16TFLOPS *= p.Scale
	c.Reference.GPUFP32TFLOPS *= p.Scale
	machine.ScaleHostReference(&c, p.bandwidthSlack())
	mem := p.Scale * stepBytesPerFLOP(p.Node().Validator) / stepBytesPerFLOP(config.DefaultConfig().Validator)
	c.Reference.GPUMemoryBytes = uint64(float64(c.Reference.GPUMemoryBytes) * mem)
	for i := range c.Classes {
		c.Classes[i].FP16TFLOPS *= p.Scale
		c.Classes[i].FP32TFLOPS *= p.Scale
		c.Classes[i].MemoryBytes = uint64(float64(c.Classes[i].MemoryBytes) * mem)
	}
	return c
}

// stepBytesPerFLOP is the working set per FLOP of a full-size fp16 step
// under v: 2/K + 2/size (output as int32, inputs as fp16). GPU memory
// scales as throughput does, times its ratio for the testnet's small
// steps to the default's, so that a simulated miner is credited the share
// of its memory a real one is.
func stepBytesPerFLOP(v config.ValidatorConfig) float64 {
	return 2/float64(v.K) + 2/float64(v.Size)
}
