package plan

import (
	"errors"
	"fmt"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// A miner accepts a GPU round only if Challenge could have sized it
// (SPEC.md §16): the same functions bound what the planner gives and what
// the miner admits, so the two cannot drift. Challenge's output depends on
// speeds the miner does not know, but it states its own sizing: each of
// its steps 1..D−1 is expected to take σ = min_timed ÷ (D − 1), its
// slowest step at most MaxSpeedup·σ, and a round trip enters it through
// the deadlines and through D·σ. The miner bounds the round trip by the
// opening window (MaxRTT), and checks the steps, D·σ and the deadline
// against what a plan gives at that round trip.

// RTTPings is how many pings a validator times, one after another, before
// each round; the least sizes it.
const RTTPings = 3

// MaxRTT is the longest round trip a round of a miner announcing ann is
// sized with and still opened: a validator starts in the first eighth of
// its slot (slot = target + target/4), and its RTTPings pings come before
// its challenge, which reaches the miner by the opening window's end
// (round.OpeningLag after the eighth, clocks up to round.OpeningSkew
// apart). The least of the pings is at most a third of them.
func MaxRTT(cfg config.ValidatorConfig, ann *pb.MinerAnnounce) time.Duration {
	t := RoundTarget(cfg, ann)
	return ((t+t/4)/8 + round.OpeningLag + round.OpeningSkew) / RTTPings
}

// LongestRound bounds D·σ of a round Challenge sizes for a miner
// announcing ann with subs sub-challenges and round trip up to rtt: its
// nominal length, or min_steps steps of the least step (each 1.25 round
// trips) where that is longer. A step at the smallest shape (Smallest)
// may take longer: its work is too small to matter.
func LongestRound(cfg config.ValidatorConfig, ann *pb.MinerAnnounce, subs int, rtt time.Duration) time.Duration {
	least, most := stepRange(cfg, subs)
	target := NominalRound(cfg, ann, rtt)
	return max(target, time.Duration(least)*leastStep(target, most, rtt))
}

// LatestDeadline is the latest deadline Challenge sets for a round of
// steps steps timed over at least minTimed (as sent, in whole
// milliseconds; 0 for a probe), for a miner announcing ann: its slowest
// step at MaxSpeedup times the step min_timed implies, rounded up, and
// the round trip at MaxRTT.
func LatestDeadline(cfg config.ValidatorConfig, ann *pb.MinerAnnounce, steps int, minTimed time.Duration) time.Duration {
	sigma := (minTimed + time.Millisecond) / time.Duration(max(1, steps-1))
	_, d := deadlines(cfg, steps, MaxSpeedup*sigma, MaxRTT(cfg, ann))
	return d.Truncate(time.Millisecond) + time.Millisecond
}

// Smallest says whether p is FitStep's smallest shape, where a step's
// budget can no longer shrink it: one batch, and neither M, N nor K can
// halve: at most 3t² outputs of K < 32, under 50 MFLOP at the largest
// tile.
func Smallest(p proof.Params) bool {
	q := FitStep(p, 0, 0, 0)
	return p.Batch == 1 && q.M == p.M && q.N == p.N && q.K == p.K
}

// Admissible says whether a miner announcing ann accepts challenge c of
// sub-challenges params, as far as its size goes: as many steps as a plan
// gives, sized to last no longer than LongestRound at MaxRTT (unless
// its steps are the smallest), and due no later than LatestDeadline. cfg
// is the network's validator settings: every validator's must match them.
func Admissible(cfg config.ValidatorConfig, ann *pb.MinerAnnounce, c *pb.Challenge, params []proof.Params) error {
	subs, steps := len(params), int(c.Steps)
	if subs == 0 {
		return errors.New("no sub-challenges")
	}
	if least, most := stepRange(cfg, subs); steps < least || steps > max(least, most) {
		return fmt.Errorf("%d steps of %d sub-challenges: a plan gives %d to %d", steps, subs, least, max(least, most))
	}
	minTimed := time.Duration(c.MinTimedMs) * time.Millisecond
	rtt := MaxRTT(cfg, ann)
	if !Smallest(params[0]) {
		// D·σ, rounded down as min_timed was.
		sized := minTimed * time.Duration(steps) / time.Duration(steps-1)
		if long := LongestRound(cfg, ann, subs, rtt); sized > long+time.Millisecond {
			return fmt.Errorf("sized to last %v: a plan sizes a round at most %v (round trips up to %v)", sized, long, rtt)
		}
	}
	deadline := time.Duration(c.DeadlineMs) * time.Millisecond
	if latest := LatestDeadline(cfg, ann, steps, minTimed); deadline > latest {
		return fmt.Errorf("deadline %v: a plan of %d steps timed over %v sets at most %v", deadline, steps, minTimed, latest)
	}
	return nil
}
