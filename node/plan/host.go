package plan

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Host round sizes.
const (
	// HostSamples is the number of segments the validator recomputes, of
	// config.HostCheckpoints per CPU chain.
	HostSamples = 16
	// ramSegment is a RAM walk's steps per checkpoint: committing a
	// checkpoint (a derive-key, about 0.6 µs) costs a few per cent of its
	// 64 steps' reads, and the validator recomputes HostSamples × 64 items
	// (15 ms at 15 µs), whatever the walk's length, unless C·N/64 would
	// pass host.MaxLeaves.
	ramSegment = 64
	// maxCPUSegment bounds the steps the validator recomputes per sampled
	// CPU segment when a distant miner's round grows: 16 × 2^16 chain
	// steps (30 ms).
	maxCPUSegment = 1 << 16
	// plotSamples is a storage audit's sampled segments of
	// config.PlotSegment steps: at most 32 blocks (2 MiB at 64 KiB) per
	// opening.
	plotSamples = 8
)

// HostPlan is a validator's host round before it is sent.
type HostPlan struct {
	Challenge hostround.Challenge
	Secret    [32]byte
	RTT       time.Duration
	RootBy    time.Duration
}

// hostChains is one chain or walk per announced core (1 if none is
// announced), at most limit.
func hostChains(ann *pb.MinerAnnounce, limit int) uint64 {
	if h := ann.GetHardware(); h != nil && h.CpuCores > 0 {
		return min(uint64(h.CpuCores), uint64(max(1, limit)))
	}
	return 1
}

// AnnouncedPlot is the miner's announced plot and root, if the plot is the
// miner's own and of the network's block size and rounds.
func AnnouncedPlot(p peer.ID, ann *pb.MinerAnnounce, c config.NetworkConfig) (*plot.Plot, commit.CV, bool) {
	if len(ann.GetPlot()) == 0 || len(ann.GetPlotRoot()) != len(commit.CV{}) {
		return nil, commit.CV{}, false
	}
	pl, err := plot.DecodePlot(ann.GetPlot())
	if err != nil || peer.ID(pl.Miner) != p || uint32(pl.BlockLog) != c.PlotBlockLog || pl.Rounds != c.PlotRounds {
		return nil, commit.CV{}, false
	}
	return pl, commit.CV(ann.GetPlotRoot()), true
}

// FarSteps is n, or for a distant miner the steps that last 20 round
// trips at stepNs, the miner's expected step time (ExpectedStepNs), at
// most limit and at most longest at stepNs: the round trip subtracted from
// a root's arrival is capped at 1/20 of it, so a round shorter than 19
// round trips of the miner's real work costs a distant miner credit
// (§23.8). Sized at the bound, a core 3.4× faster than it worked 5.8 round
// trips and lost 10 %. The steps are a multiple of g, the larger of
// granule (a power of two the kind's segment needs) and a power of two
// ≥ need ÷ 16, need rounded up and the limits down: rounding costs at
// most 1/8 of the round.
func FarSteps(n uint64, rtt time.Duration, stepNs float64, granule, limit uint64, longest time.Duration) uint64 {
	need := uint64(float64(hostround.MaxRTTDivisor*rtt.Nanoseconds()) / stepNs)
	if need <= n {
		return n
	}
	g := max(granule, uint64(1)<<max(0, bits.Len64(need/8)-1))
	limit = min(limit, uint64(float64(longest.Nanoseconds())/stepNs)) / g * g
	return max(n, min((need+g-1)/g*g, limit))
}

// SizingStepNs is a verified record's step time for sizing the next
// round: its root's arrival less the whole round trip, per step of one
// chain. Unlike the credit's (epoch.HostElapsed), the subtraction is not
// capped, so one round measures a distant miner's real speed; 0 if the
// round trip exceeds the arrival.
func SizingStepNs(r *store.HostRecord, steps uint64) float64 {
	return float64(max(r.RootNanos-r.RTTNanos, 0)) / float64(max(1, steps))
}

// MaxGrowthAtBound bounds a grown round's work at the step bound, in
// host_max_round.
const MaxGrowthAtBound = 4

// HostAdmissible says whether a miner takes host proof pr on, as far as its
// size goes: no more chains than the kind's max_chains and no more steps
// than a plan of cfg gives (Host): the configured steps, or for a distant
// miner at most MaxGrowthAtBound × host_max_round of work at the step
// bound. Its root_by, a function of the steps, is bounded with them
// (hostround.RootBy). cfg is the network's validator settings.
func HostAdmissible(cfg config.ValidatorConfig, pr hostround.Proof) error {
	var steps uint64
	var chains int
	switch pr.Kind() {
	case hostround.KindCPU:
		return cpuAdmissible(cfg, pr)
	case hostround.KindRAM:
		steps, chains = cfg.HostRAMSteps, cfg.HostRAMMaxWalks
	case hostround.KindPlot:
		steps, chains = cfg.HostPlotSteps, cfg.HostPlotMaxWalks
	}
	most := max(steps, uint64(MaxGrowthAtBound*float64(cfg.HostMaxRound.Nanoseconds())/pr.BoundNs()))
	if sh := pr.Dims(); sh.Chains > uint64(max(1, chains)) || sh.Steps > most {
		return fmt.Errorf("beyond what a plan gives this miner: %s round of %d×%d steps, a plan gives at most %d×%d",
			pr.Name(), sh.Chains, sh.Steps, max(1, chains), most)
	}
	return nil
}

// cpuAdmissible: a CPU round runs to the network's window at its step
// scale (a round of fixed steps would let one server answer identities in
// turn, each credited alone), with at most max_chains chains; its window
// bounds its time and host.MaxLeaves its checkpoints.
func cpuAdmissible(cfg config.ValidatorConfig, pr hostround.Proof) error {
	c, ok := hostround.Windowed(pr)
	switch {
	case !ok:
		return errors.New("a cpu round of fixed steps: the network's run to a window")
	case c.Window() != cfg.HostCPUWindow.Duration || c.ScaleLog != cfg.HostCPUScaleLog:
		return fmt.Errorf("a cpu round to a %v window of steps scaled 2^%d: the network's is %v, 2^%d",
			c.Window(), c.ScaleLog, cfg.HostCPUWindow, cfg.HostCPUScaleLog)
	case c.Chains > uint64(max(1, cfg.HostCPUMaxChains)):
		return fmt.Errorf("beyond what a plan gives this miner: a cpu round of %d chains, a plan gives at most %d", c.Chains, max(1, cfg.HostCPUMaxChains))
	}
	return nil
}

// MaxSizingSpeedup bounds how much faster than the step bound a round is
// sized: a miner that delays its pings to look faster only lengthens its
// own next round (its credit stays capped, §23.8), and at most this far.
const MaxSizingSpeedup = 256

// ExpectedStepNs is what a distant miner's round is sized at: its last
// sizing step time of the kind (SizingStepNs) if it beat the bound, at
// most MaxSizingSpeedup faster; else the bound. A miner that slowed that
// round down only shortens its next one, below 19 round trips, and loses
// credit.
func ExpectedStepNs(measured, bound float64) float64 {
	if measured > 0 && measured < bound {
		return max(measured, bound/MaxSizingSpeedup)
	}
	return bound
}

// pow2AtLeast is the smallest power of two ≥ x.
func pow2AtLeast(x uint64) uint64 { return uint64(1) << bits.Len64(max(1, x)-1) }

// Host sizes a host round of kind for miner, ram the RAM epoch in
// force, stepNs the miner's last measured step time of the kind (0:
// none). The root is due after the round trip, a second of slack and a
// multiple of the work at the step bound (a root that late earns little
// credit anyway).
func Host(c config.Config, kind byte, miner peer.ID, ann *pb.MinerAnnounce, ram memwalk.Epoch, rtt time.Duration, stepNs float64, draws io.Reader) (*HostPlan, error) {
	cfg := c.Validator
	p := &HostPlan{RTT: rtt}
	var seed [32]byte
	for _, b := range [][]byte{p.Secret[:], seed[:]} {
		if _, err := io.ReadFull(draws, b); err != nil {
			return nil, err
		}
	}
	var pr hostround.Proof
	samples := HostSamples
	// grow sizes a kind for a distant miner (FarSteps), its work at the
	// bound at most MaxGrowthAtBound × host_max_round: that bounds how long
	// its root is awaited (root_by) whatever speed the miner showed.
	grow := func(n uint64, bound float64, granule, limit uint64) uint64 {
		limit = min(limit, uint64(MaxGrowthAtBound*float64(cfg.HostMaxRound.Nanoseconds())/bound))
		return FarSteps(n, rtt, ExpectedStepNs(stepNs, bound), granule, limit, cfg.HostMaxRound.Duration)
	}
	switch kind {
	case hostround.KindCPU:
		pr = cpuWindowed(cfg, miner, seed, hostChains(ann, cfg.HostCPUMaxChains), rtt, stepNs)
	case hostround.KindRAM:
		w := hostChains(ann, cfg.HostRAMMaxWalks)
		n := grow(cfg.HostRAMSteps, memwalk.StepBoundNs, ramSegment, hostround.MaxWork/w)
		seg := min(n, max(ramSegment, pow2AtLeast((w*n+host.MaxLeaves-1)/host.MaxLeaves)))
		pr = hostround.RAMProof{Params: &memwalk.Params{Epoch: ram, Seed: seed, Miner: []byte(miner),
			Items: min(ann.GetRamItems(), memwalk.MaxItems), Shape: host.Shape{Chains: w, Steps: n, Segment: seg}}}
	case hostround.KindPlot:
		pl, root, ok := AnnouncedPlot(miner, ann, c.Network)
		if !ok {
			return nil, errors.New("no valid plot announced")
		}
		w := hostChains(ann, cfg.HostPlotMaxWalks)
		n := grow(cfg.HostPlotSteps, plot.StepBoundNs, config.PlotSegment, min(hostround.MaxPlotWork, host.MaxLeaves*config.PlotSegment)/w)
		pr = hostround.PlotProof{Audit: &plot.Audit{Plot: *pl, Root: root, Seed: seed,
			Shape: host.Shape{Chains: w, Steps: n, Segment: config.PlotSegment}}}
		samples = plotSamples
	default:
		return nil, fmt.Errorf("host round of unknown kind %d", kind)
	}
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	p.Challenge = hostround.Challenge{Commitment: sample.Commit(p.Secret), Samples: uint16(samples), Proof: pr}
	p.RootBy = hostround.RootBy(pr, rtt)
	p.Challenge.RootByMs = uint32(min((p.RootBy + time.Millisecond - 1).Milliseconds(), 1<<31)) // rounded up
	return p, nil
}

// maxCPUSpeedup is how many times the steps expected in a windowed CPU
// round its cap allows: a miner that beats it is credited the cap over the
// window this once, and its next round is sized from what it showed.
const maxCPUSpeedup = 16

// cpuWindowed is a CPU round run to the network's window (SPEC §23.2):
// run for hostround.RunFor the round trip, in segments of the steps
// expected in the run (at ExpectedStepNs of the miner's last sizing step
// time) ÷ config.HostCheckpoints, at most maxCPUSegment, and capped at
// maxCPUSpeedup times the expected steps within host.MaxLeaves.
func cpuWindowed(cfg config.ValidatorConfig, miner peer.ID, seed [32]byte, chains uint64, rtt time.Duration, stepNs float64) hostround.CPUProof {
	run := hostround.RunFor(cfg.HostCPUWindow.Duration, rtt)
	bound := cpuwork.StepBoundNs * float64(uint64(1)<<cfg.HostCPUScaleLog)
	expect := uint64(float64(run.Nanoseconds()) / ExpectedStepNs(stepNs, bound))
	seg := max(1, min(expect/config.HostCheckpoints, maxCPUSegment))
	leaves := max(2, min(host.MaxLeaves/chains, maxCPUSpeedup*((expect+seg-1)/seg)))
	return hostround.CPUProof{Params: &cpuwork.Params{Seed: seed, Miner: []byte(miner), TableLog: cpuwork.DefaultTableLog,
		Shape:    host.Shape{Chains: chains, Steps: leaves * seg, Segment: seg},
		WindowMs: uint32(cfg.HostCPUWindow.Milliseconds()), RunMs: uint32(run.Milliseconds()), ScaleLog: cfg.HostCPUScaleLog}}
}

// The RAM host proof's epochs (SPEC §23.9): every ram_period_epochs
// epochs the network's RAM epoch changes, miners rebuild their datasets
// from its light cache and validators check walks against that cache.

// PeriodEpoch is RAM period p's epoch. Its seed is the period's alone: no
// set of records is counted alike by every node (one published at a
// finality time is in some final sets only), and a miner whose seed
// differs from a validator's refuses its RAM rounds for the whole period.
func PeriodEpoch(c config.NetworkConfig, p uint64) memwalk.Epoch {
	return memwalk.Epoch{Seed: memwalk.PeriodSeed(p), CacheLog: uint8(c.RAMCacheLog), Rounds: c.RAMItemRounds}
}
