package plan

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// ChallengePlan is what a validator sends one miner in one round.
type ChallengePlan struct {
	Params   []proof.Params // step 0's, one per sub-challenge
	Steps    int
	Secret   [32]byte
	Samples  int
	StepTime time.Duration // expected; 0 for a probe
	// minTimed is the least time steps 1..D−1 count as taking: their
	// expected time, so the round is never credited faster than it was
	// sized for (SPEC.md §10.1); 0 for a probe.
	MinTimed time.Duration
	Probe    bool // no earlier measurement: a short probe that sizes the next round
	// firstRootBy and deadline bound the first root's and the commitment's
	// arrival after the challenge is sent.
	FirstRootBy, Deadline time.Duration
}

// Bounds of the sizing rule (SPEC.md §10).
const (
	// stepRTTMargin keeps a step longer than the round trip, so an honest
	// miner never waits for a beacon.
	stepRTTMargin = 1.25
	minK          = 16
	probeTiles    = 4 // output edge of a probe, in tiles
	// probeEdge is a probe's least output edge, in values: a probe of
	// 4 × 4 small tiles (16 values an edge, the simulated testnet's) ran
	// steps so short that a far miner's was all latency, and the round it
	// sized, at most 16× its speed, was latency-bound too.
	probeEdge = 256
)

// Challenge sizes a round of class prec (the validator's choice,
// NextPrecision) from the validator's limits, the miner's announced capacity
// (at most classMemory, the least class memory of its announced GPUs; 0:
// no bound) and what the validator measured of it before in that class: prevTFLOPS
// (its speed estimate from the last round, SizingTFLOPS; 0 if none: the
// round is a short probe), floorTFLOPS (the last sustained throughput,
// which bounds the deadlines, since an estimate may overshoot) and rtt.
// One sub-challenge per announced GPU up to subChallenges' limit (one for
// a CPU miner); each step's work takes about target/steps at prevTFLOPS, with
// steps between MinSteps and MaxSteps and each step at least 1.25 round
// trips. The miner never reports a size back. Nonces and the secret come
// from rnd.
func Challenge(cfg config.ValidatorConfig, miner peer.ID, ann *pb.MinerAnnounce, classMemory uint64, prec proof.Precision, prevTFLOPS, floorTFLOPS float64, rtt time.Duration, rnd io.Reader) (ChallengePlan, error) {
	var pl ChallengePlan
	var err error
	t := uint32(0)
	for e := uint32(proof.MinTile); e <= proof.MaxTile; e *= 2 {
		if int(4*e*e) == cfg.TileBytes {
			t = e
		}
	}
	if t == 0 {
		return pl, fmt.Errorf("tile size %d is not 4·t² for a valid t", cfg.TileBytes)
	}
	capacity := ann.MaxOutputBytes
	if classMemory > 0 {
		capacity = min(capacity, classMemory)
	}
	size := cfg.Size / t * t
	for size >= 2*t && 4*uint64(size)*uint64(size) > capacity {
		size -= t
	}
	if size < 2*t {
		return pl, fmt.Errorf("miner %s: capacity of %d bytes cannot hold two %d-byte tiles", miner, capacity, 4*t*t)
	}
	subs := subChallenges(cfg, ann)
	shape := proof.Params{Precision: prec, Batch: 1, M: size, K: min(cfg.K, prec.MaxK()), N: size, Tile: t, Miner: []byte(miner)}
	least, maxSteps := stepRange(cfg, subs)
	pl.Steps = least
	pl.FirstRootBy, pl.Deadline = cfg.Deadline.Duration, cfg.Deadline.Duration
	if prevTFLOPS <= 0 {
		// A probe: a small output at the full inner dimension, whatever
		// the device; its throughput sizes the next round.
		edge := min(size, max(probeTiles*t, probeEdge/t*t))
		shape.M, shape.N = edge, edge
		pl.Probe = true
	} else {
		target := NominalRound(cfg, ann, rtt)
		step := leastStep(target, maxSteps, rtt)
		pl.Steps = max(pl.Steps, min(maxSteps, int(target/max(step, 1))))
		perSub := prevTFLOPS * 1e12 * max(target/time.Duration(pl.Steps), step).Seconds() / float64(subs)
		shape = FitStep(shape, perSub, capacity, prec.MaxK())
		pl.StepTime = time.Duration(float64(subs) * shape.FLOPs() / (prevTFLOPS * 1e12) * float64(time.Second))
		pl.MinTimed = time.Duration(pl.Steps-1) * pl.StepTime
		// At most MaxSpeedup × StepTime, which LatestDeadline assumes:
		// the rate it takes is at least prevTFLOPS/MaxSpeedup.
		slowest := time.Duration(float64(subs) * shape.FLOPs() / (min(prevTFLOPS, max(floorTFLOPS, prevTFLOPS/MaxSpeedup)) * 1e12) * float64(time.Second))
		pl.FirstRootBy, pl.Deadline = deadlines(cfg, pl.Steps, slowest, rtt)
		pl.MinTimed = min(pl.MinTimed, pl.Deadline)
	}
	for i := 0; i < subs; i++ {
		p := shape
		if _, err := io.ReadFull(rnd, p.Nonce[:]); err != nil {
			return pl, err
		}
		if err := p.Validate(); err != nil {
			return pl, err
		}
		pl.Params = append(pl.Params, p)
	}
	if _, err := io.ReadFull(rnd, pl.Secret[:]); err != nil {
		return pl, err
	}
	tiles := uint64(pl.Steps) * uint64(subs) * shape.Tiles()
	pl.Samples, err = sample.Count(cfg.DetectFraction, cfg.DetectProbability, tiles)
	return pl, err
}

// stepRange is the fewest and the most steps Challenge gives a round of
// subs sub-challenges: min_steps and max_steps, within proof.MaxRoundRoots
// roots, and a probe's at least 2. A sized round has at most the larger.
func stepRange(cfg config.ValidatorConfig, subs int) (least, most int) {
	most = min(cfg.MaxSteps, proof.MaxRoundRoots/max(1, subs))
	return max(2, min(cfg.MinSteps, proof.MaxRoundRoots/max(1, subs))), most
}

// leastStep is the shortest step of a round of target length with at most
// most steps, rtt the round trip: each outlasts 1.25 round trips, so an
// honest miner never waits for a beacon.
func leastStep(target time.Duration, most int, rtt time.Duration) time.Duration {
	return max(target/time.Duration(max(1, most)), time.Duration(stepRTTMargin*float64(rtt)))
}

// deadlines are a sized round's first-root and commitment deadlines, its
// slowest step taking slowest (the work at the last measured throughput)
// and rtt the round trip. A liveness bound only (throughput is timed from
// the roots): generous, so a miner slowed by other validators' rounds is
// measured slower rather than failed.
func deadlines(cfg config.ValidatorConfig, steps int, slowest, rtt time.Duration) (firstRootBy, deadline time.Duration) {
	firstRootBy = cfg.FirstRootSlack.Duration + 2*slowest + rtt
	deadline = cfg.Deadline.Duration + firstRootBy + 4*time.Duration(steps)*slowest
	deadline = min(deadline, protocol.MaxDeadlineMS*time.Millisecond)
	return min(firstRootBy, deadline), deadline
}

// subChallenges is one per announced GPU (one for a CPU miner), but no
// more than leave min_steps steps within the round's roots: more GPUs must
// not shorten the chain, which bounds what bursting gains (SPEC §10.1).
// A miner with more GPUs runs the sub-challenges on as many of them.
func subChallenges(cfg config.ValidatorConfig, ann *pb.MinerAnnounce) int {
	return max(1, min(len(ann.Gpus), protocol.MaxSubChallenges, proof.MaxRoundRoots/max(1, cfg.MinSteps)))
}

// RoundTarget is the nominal round length for a miner: round_target for
// a GPU miner, round_target_cpu for a CPU-only one.
func RoundTarget(cfg config.ValidatorConfig, ann *pb.MinerAnnounce) time.Duration {
	if len(ann.Gpus) > 0 {
		return cfg.RoundTarget.Duration
	}
	return cfg.RoundTargetCPU.Duration
}

// FitStep shapes one sub-challenge to about flops of work. Too much work:
// halve the largest of M, N and K (M and N in whole tiles, at least two
// tiles in all) until it fits, then grow K back to fill the budget, so the
// product stays as square, hence as compute-bound, as it can. Too little:
// more batches, up to the capacity, then K again, beyond the configured K
// up to limitK (the exactness limit) once the batches fill the capacity:
// K costs the miner no memory, and a far miner's step must outlast its
// round trip (SPEC.md §10.1). Then N and M widen in whole tiles up to
// their configured size (growEdges) and K, up to limitK, fills what is
// left: a step takes at least 90 % of its budget.
func FitStep(p proof.Params, flops float64, capacity uint64, limitK uint32) proof.Params {
	maxK, maxM, maxN := p.K, p.M, p.N
	for p.FLOPs() > flops {
		switch {
		case p.K >= p.M && p.K >= p.N && p.K/2 >= minK:
			p.K /= 2
		case p.N >= p.M && p.N >= 2*p.Tile && p.M*(p.N/2)/(p.Tile*p.Tile) >= 2:
			p.N = p.N / 2 / p.Tile * p.Tile
		case p.M >= 2*p.Tile && (p.M/2)*p.N/(p.Tile*p.Tile) >= 2:
			p.M = p.M / 2 / p.Tile * p.Tile
		case p.K/2 >= minK:
			p.K /= 2
		default:
			return p // the smallest shape: the step takes longer than planned
		}
	}
	if b := math.Floor(flops / p.FLOPs()); b > 1 {
		perBatch := 4 * uint64(p.M) * uint64(p.N)
		p.Batch = uint32(max(1, min(b, float64(capacity/perBatch), proof.MaxBatch)))
		if float64(p.Batch) < b {
			maxK = max(maxK, limitK)
		}
	}
	p.K = uint32(min(float64(maxK), float64(p.K)*flops/p.FLOPs()))
	p = growEdges(p, flops, capacity, maxM, maxN)
	// What whole tiles or the capacity leave, K fills.
	p.K = uint32(min(float64(limitK), float64(p.K)*flops/p.FLOPs()))
	return p
}

// growEdges widens N, then M, in whole tiles up to maxM×maxN and the
// capacity, while the step stays within flops. Halving leaves a step
// between half and all of its budget; a round of such steps would end
// early, and the device would idle for the rest of its slot, time an
// identity sharing it could use (SPEC.md §16). FitStep's K fills the
// rest.
func growEdges(p proof.Params, flops float64, capacity uint64, maxM, maxN uint32) proof.Params {
	edges := []struct {
		at    func(*proof.Params) *uint32
		limit uint32
	}{{func(q *proof.Params) *uint32 { return &q.N }, maxN}, {func(q *proof.Params) *uint32 { return &q.M }, maxM}}
	for _, e := range edges {
		w := uint32(min(float64(e.limit), float64(*e.at(&p))*flops/p.FLOPs())) / p.Tile * p.Tile
		for ; w > *e.at(&p); w -= p.Tile {
			q := p
			*e.at(&q) = w
			if q.FLOPs() <= flops && q.OutputBytes() <= capacity {
				p = q
				break
			}
		}
	}
	return p
}

// MaxSpeedup bounds SizingTFLOPS against the measured throughput, so that
// a misread arrival pattern cannot make the next round much longer than
// planned. A far miner's probe understates it about ρ/(2σ) times (14× for
// a 15 ms step at 400 ms); an overshoot only lengthens one round, and a
// round that then misses its epoch's cutoff resets the estimate (play).
const MaxSpeedup = 16

// SizingTFLOPS is the speed to size a miner's next round with, from its
// last verified round: its sustained throughput, round trip and steps'
// root arrivals (ns after the challenge). A miner that waited for beacons
// sends two roots a step time σ apart, then waits out the round trip ρ
// (SPEC.md §10.1: intervals σ, ρ, σ, ρ, …, p = (ρ + σ)/2 on average), so
// its sustained figure understates it. It is recognised by its arrivals:
// steps faster than one per round trip, with a lower-quartile interval
// under half the mean (a miner that was not waiting, even one whose ping
// was slowed by load, shows about the mean). Its step time is then the
// smaller of that interval and 2p − ρ: the interval's few milliseconds
// grow with a loaded validator's reaction time, p and ρ do not.
func SizingTFLOPS(sustained float64, rtt time.Duration, arrivals []int64) float64 {
	n := len(arrivals)
	if sustained <= 0 || n < 4 {
		return sustained
	}
	p := float64(arrivals[n-1]-arrivals[0]) / float64(n-1) // ns per step
	gaps := make([]float64, n-1)
	for i := range gaps {
		gaps[i] = float64(arrivals[i+1] - arrivals[i])
	}
	slices.Sort(gaps)
	lq := gaps[len(gaps)/4]
	if p <= 0 || p >= float64(rtt) || lq >= p/2 {
		return sustained // not waiting
	}
	sigma := max(min(lq, 2*p-float64(rtt)), p/MaxSpeedup)
	return sustained * p / sigma
}

// TimedRate is a verified round's sustained throughput from its root
// arrivals alone, without the challenge's min_timed.
func TimedRate(rec *store.RoundRecord) float64 {
	arr := audit.StepArrivals(rec)
	sustained, _ := round.Throughput(arr, rec.FLOPs/float64(max(1, len(arr))), 2, 0)
	return sustained
}

// NominalRound is how long a round with round trip rtt is sized to last:
// its target, and at least min_rtt_multiple round trips (SPEC §10.1).
func NominalRound(cfg config.ValidatorConfig, ann *pb.MinerAnnounce, rtt time.Duration) time.Duration {
	return max(RoundTarget(cfg, ann), time.Duration(cfg.MinRTTMultiple*float64(rtt)))
}

// NextGap is the random pause after a round of length d so that rounds
// occupy a fraction duty of the miner's time on average: uniform on
// [0, 2·d·(1−duty)/duty], so the miner cannot predict when the next one
// starts.
func NextGap(r *rand.Rand, d time.Duration, duty float64) time.Duration {
	if duty >= 1 {
		return 0
	}
	return time.Duration(r.Float64() * 2 * float64(d) * (1 - duty) / duty)
}

// Supports reports whether the miner announces class p.
func Supports(ann *pb.MinerAnnounce, p proof.Precision) bool {
	for _, x := range ann.Precisions {
		if proof.Precision(x) == p {
			return true
		}
	}
	return false
}

// GPUNames are the announced GPUs' names.
func GPUNames(ann *pb.MinerAnnounce) []string {
	out := make([]string, len(ann.Gpus))
	for i, g := range ann.Gpus {
		out[i] = g.GetName()
	}
	return out
}
