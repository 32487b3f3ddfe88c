package plan

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
)

// sent is pl as a validator sends it: its durations in whole milliseconds.
func sent(pl ChallengePlan) *pb.Challenge {
	return &pb.Challenge{Steps: uint32(pl.Steps), DeadlineMs: uint32(pl.Deadline.Milliseconds()),
		FirstRootMs: uint32(max(1, pl.FirstRootBy.Milliseconds())), MinTimedMs: uint32(pl.MinTimed.Milliseconds()), Probe: pl.Probe}
}

// boundAnnounces are miners a plan sizes: GPU miners of 1 to 16 GPUs
// (capacity from a few tiles to the largest), and a CPU-only one.
func boundAnnounces() map[string]*pb.MinerAnnounce {
	gpus := func(n int) []*pb.GPU {
		out := make([]*pb.GPU, n)
		for i := range out {
			out[i] = &pb.GPU{Name: "H200"}
		}
		return out
	}
	return map[string]*pb.MinerAnnounce{
		"1 GPU":          {Precisions: []uint32{1, 2}, MaxOutputBytes: 141e9, Gpus: gpus(1)},
		"8 GPUs":         {Precisions: []uint32{1, 2}, MaxOutputBytes: 141e9, Gpus: gpus(8)},
		"16 GPUs":        {Precisions: []uint32{1, 2}, MaxOutputBytes: 16 << 30, Gpus: gpus(16)},
		"small capacity": {Precisions: []uint32{1, 2}, MaxOutputBytes: 1 << 20, Gpus: gpus(2)},
		"CPU only":       {Precisions: []uint32{1, 2}, MaxOutputBytes: 4 << 20},
	}
}

// Every round Challenge sizes is Admissible to its miner: probes and sized
// rounds, for GPU and CPU-only miners, at speeds from a slow CPU's to
// beyond the largest GPU's, estimates up to MaxSpeedup above the floor,
// and round trips up to MaxRTT (a distant miner's rounds are longer). The
// bounds are no looser than the planner: some rounds reach each.
func TestPlannedRoundsAdmissible(t *testing.T) {
	miner := nodetest.Peer(t)
	local := config.LocalConfig().Validator
	local.Size, local.K, local.TileBytes, local.MinSteps, local.MaxSteps = 128, 128, 4096, 6, 12 // the node tests'
	draws := bytes.NewReader(bytes.Repeat([]byte{3, 1, 4, 1, 5, 9}, 1<<20))
	n, deadlineUse, roundUse := 0, 0.0, 0.0
	for cname, cfg := range map[string]config.ValidatorConfig{"default": config.DefaultConfig().Validator, "local": config.LocalConfig().Validator, "tests": local} {
		for aname, ann := range boundAnnounces() {
			rtts := []time.Duration{0, time.Millisecond, 50 * time.Millisecond, 400 * time.Millisecond, MaxRTT(cfg, ann)}
			for _, prec := range []proof.Precision{proof.FP16, proof.FP32} {
				for _, tflops := range []float64{0, 1e-6, 1e-3, 0.05, 1, 40, 600, 1e4} {
					for _, speedup := range []float64{1, 4, MaxSpeedup} {
						for _, rtt := range rtts {
							draws.Seek(0, 0)
							pl, err := Challenge(cfg, miner, ann, 0, prec, tflops, tflops/speedup, rtt, draws)
							if err != nil {
								t.Fatalf("%s, %s: %v", cname, aname, err)
							}
							n++
							c := sent(pl)
							if err := Admissible(cfg, ann, c, pl.Params); err != nil {
								t.Errorf("%s config, %s, %v at %g TFLOPS (floor 1/%g), rtt %v: %d steps, min_timed %v, deadline %v refused: %v",
									cname, aname, prec, tflops, speedup, rtt, pl.Steps, pl.MinTimed, pl.Deadline, err)
							}
							latest := LatestDeadline(cfg, ann, pl.Steps, time.Duration(c.MinTimedMs)*time.Millisecond)
							deadlineUse = max(deadlineUse, float64(pl.Deadline)/float64(latest))
							if !Smallest(pl.Params[0]) {
								long := LongestRound(cfg, ann, len(pl.Params), MaxRTT(cfg, ann))
								roundUse = max(roundUse, float64(pl.MinTimed)*float64(pl.Steps)/float64(pl.Steps-1)/float64(long))
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d planned rounds admissible; the most of the deadline bound used %.4f, of the round length's %.4f", n, deadlineUse, roundUse)
	if deadlineUse < 0.99 || roundUse < 0.99 {
		t.Errorf("no planned round comes near the bounds (%.4f of the deadline's, %.4f of the round length's): they are looser than the planner", deadlineUse, roundUse)
	}
}

// A round beyond what a plan gives is refused: more or fewer steps, sized
// to last longer, or due later, than any plan of the miner's; the same
// round at the bound is admitted.
func TestOversizedRoundsRefused(t *testing.T) {
	miner := nodetest.Peer(t)
	cfg := config.DefaultConfig().Validator
	ann := boundAnnounces()["1 GPU"]
	rtt := MaxRTT(cfg, ann)
	pl, err := Challenge(cfg, miner, ann, 0, proof.FP16, 600, 600, rtt, bytes.NewReader(bytes.Repeat([]byte{7}, 1<<10)))
	if err != nil {
		t.Fatal(err)
	}
	long := LongestRound(cfg, ann, 1, rtt)
	atBound := func(c *pb.Challenge) *pb.Challenge {
		c.MinTimedMs = uint32((long * time.Duration(c.Steps-1) / time.Duration(c.Steps)).Milliseconds())
		c.DeadlineMs = uint32(LatestDeadline(cfg, ann, int(c.Steps), time.Duration(c.MinTimedMs)*time.Millisecond).Milliseconds())
		return c
	}
	if err := Admissible(cfg, ann, atBound(sent(pl)), pl.Params); err != nil {
		t.Fatalf("a round at the bound refused: %v", err)
	}
	for _, c := range []struct {
		name, want string
		edit       func(*pb.Challenge)
	}{
		{"a step more than max_steps", "a plan gives", func(c *pb.Challenge) { c.Steps = uint32(cfg.MaxSteps + 1) }},
		{"one step", "a plan gives", func(c *pb.Challenge) { c.Steps = 1 }},
		{"sized longer", "sized to last", func(c *pb.Challenge) { c.MinTimedMs = uint32(long.Milliseconds()) + 2 }},
		{"due later", "deadline", func(c *pb.Challenge) { c.DeadlineMs++ }},
		{"an hour to compute a probe", "deadline", func(c *pb.Challenge) { c.MinTimedMs, c.DeadlineMs = 0, 3_600_000 }},
	} {
		msg := atBound(sent(pl))
		c.edit(msg)
		if err := Admissible(cfg, ann, msg, pl.Params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
}

// The bound at the defaults, as SPEC §16 states it: the longest round a
// GPU miner accepts and its latest deadline.
func TestBoundAtDefaults(t *testing.T) {
	cfg := config.DefaultConfig().Validator
	ann := boundAnnounces()["1 GPU"]
	rtt := MaxRTT(cfg, ann)
	long := LongestRound(cfg, ann, 1, rtt)
	_, most := stepRange(cfg, 1)
	latest := LatestDeadline(cfg, ann, most, long*time.Duration(most-1)/time.Duration(most))
	t.Logf("max rtt %v, longest round %v, latest deadline %v (%d steps)", rtt, long, latest, most)
	if rtt.Round(10*time.Millisecond) != 1350*time.Millisecond || long.Round(100*time.Millisecond) != 37200*time.Millisecond ||
		latest.Round(time.Minute) != 42*time.Minute {
		t.Errorf("the bound at the defaults changed: SPEC §16 states it")
	}
}
