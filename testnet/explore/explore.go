// Package explore is fault exploration (pog testnet --explore), as
// TigerBeetle's VOPR and FoundationDB's simulator do: each seed draws a
// small testnet and faults up front, runs it in virtual time and checks the invariants below. The
// seed gives the network, the keys and every fault's node and window;
// with packet loss the draws per packet follow the order goroutines send
// in, so such a run is reproducible in its faults, not bit for bit.
package explore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/pog-network/pog/testnet"
	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/report"
)

// adversaries are the classes that make sense in a network of 2–4
// miners: each is judged on its own, without a twin or a delay proxy.
var adversaries = []string{"lazy", "precision", "replay", "overclaim", "slow", "burst", "intermittent",
	"spammer", "forger", "dishonest-validator", "equivocator"}

// scheduled are the classes that play the slot schedule (SPEC §16):
// drawn only into seeds that run under it.
var scheduled = []string{"absent", "squatter", "ram-rebuild"}

// ranges bound what a seed draws: validators, honest miners,
// epochs, epoch length in seconds (inclusive), and how many adversaries.
type ranges struct {
	validators, miners, epochs, epochSeconds [2]int
	adversaries                              int
}

var defaultRanges = ranges{validators: [2]int{2, 4}, miners: [2]int{2, 4}, epochs: [2]int{2, 3}, epochSeconds: [2]int{20, 40},
	adversaries: len(adversaries)}

// Config is seed's network and faults, its report under out/SEED.
func Config(seed int64, out string) testnet.Config { return config(seed, out, defaultRanges) }

func config(seed int64, out string, rg ranges) testnet.Config {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xe8))
	in := func(r [2]int) int { return r[0] + rng.IntN(r[1]-r[0]+1) }
	cfg := testnet.DefaultConfig()
	cfg.Seed, cfg.Out, cfg.Sim = seed, filepath.Join(out, fmt.Sprint(seed)), true
	cfg.Validators, cfg.Miners, cfg.Epochs = in(rg.validators), in(rg.miners), in(rg.epochs)
	cfg.EpochLength = time.Duration(in(rg.epochSeconds)) * time.Second
	// Epochs this short hold under one slot per validator and miner: pause
	// at random instead (as the short-epoch tests do).
	cfg.SlotSchedule, cfg.DutyCycle = false, 0.2
	for _, a := range adversaries {
		if rng.IntN(4) == 0 && len(cfg.Adversaries) < rg.adversaries {
			cfg.Adversaries = append(cfg.Adversaries, a)
		}
	}
	cfg.Faults = drawFaults(rng, cfg)
	// Drawn last, so that a seed without it keeps the network and faults
	// it had before seeds could draw it. Epochs of 30 s and more hold
	// several owned slots per validator and miner.
	if cfg.EpochLength >= 30*time.Second && rng.IntN(2) == 0 {
		cfg.SlotSchedule, cfg.DutyCycle = true, 0
		for _, a := range scheduled {
			if rng.IntN(3) == 0 {
				cfg.Adversaries = append(cfg.Adversaries, a)
			}
		}
	}
	return cfg
}

// drawFaults draws one to all five faults. Windows fall in the run's first
// (Epochs+1) epochs; validator-1 is never crashed nor failed, as the late
// joiner and the late-join checks lean on it.
func drawFaults(rng *rand.Rand, cfg testnet.Config) netlab.Faults {
	span := time.Duration(cfg.Epochs+1) * cfg.EpochLength
	at := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)))).Round(100 * time.Millisecond)
	}
	var honest, faultable []string
	for i := 1; i <= cfg.Validators; i++ {
		honest = append(honest, fmt.Sprintf("validator-%d", i))
	}
	for i := 1; i <= cfg.Miners; i++ {
		honest = append(honest, fmt.Sprintf("miner-%d", i))
	}
	faultable = honest[1:]
	var f netlab.Faults
	for !f.Any() {
		if rng.IntN(2) == 0 {
			f.Partition = &netlab.Partition{From: at(5*time.Second, span/2)}
			f.Partition.To = f.Partition.From + at(3*time.Second, 15*time.Second)
			f.Partition.A, f.Partition.B = split(rng, honest)
		}
		if rng.IntN(2) == 0 {
			f.Loss = 0.01 + 0.09*rng.Float64()
		}
		if rng.IntN(2) == 0 {
			s := &netlab.Spike{Node: honest[rng.IntN(len(honest))], Extra: at(50*time.Millisecond, 500*time.Millisecond), From: at(5*time.Second, span/2)}
			s.To = s.From + at(5*time.Second, 20*time.Second)
			f.Spike = s
		}
		order := rng.Perm(len(faultable))
		if rng.IntN(2) == 0 {
			c := &netlab.Crash{Node: faultable[order[0]], At: at(cfg.EpochLength/2, span/2)}
			c.Restart = c.At + at(5*time.Second, 15*time.Second)
			f.Crash = c
		}
		if rng.IntN(2) == 0 && len(faultable) > 1 {
			f.Store = &netlab.StoreFault{Node: faultable[order[1]], At: at(cfg.EpochLength/2, span*7/10)}
		}
	}
	return f
}

// split cuts names in two non-empty sets at random.
func split(rng *rand.Rand, names []string) (a, b []string) {
	cut := 1 + rng.IntN(len(names)-1)
	for i, j := range rng.Perm(len(names)) {
		if i < cut {
			a = append(a, names[j])
		} else {
			b = append(b, names[j])
		}
	}
	return a, b
}

// invariants are the checks that hold under every fault. The run's other
// checks compare honest miners with one another or with adversaries, and a
// fault legitimately breaks them: a partitioned, crashed, slowed or
// store-failed honest miner earns less and carries flags (ranking, "no
// honest miner penalised", an adversary "penalised" relative to it), a
// stopped node misses records for good and lost gossip may not return in
// time ("every node holds every validator's epoch records", the late
// joiner's catch-up), and under loss a detection may slip past the first
// full epoch. The profitability bound stays an invariant because it is
// judged against honest miners no node fault struck (testnet's run.struck); an
// adversary whose profile has none left is reported unjudged.
var invariants = []string{
	"identical consensus on every node",
	"pog audit passes on every honest validator's store",
	"auditor with no role: pog audit --peer passes for every honest validator",
	"auditor names the dishonest validator's bad records",
	"no adversary earns more than honest work",
	"no verified round lost",
	"nodes stop only by injected store faults, with ErrStoreFailed",
}

// Failures is what broke in a seed's run: an error, or the
// invariants that failed, one line each.
func Failures(s *report.Summary, err error) []string {
	if err != nil {
		return []string{"run broke: " + err.Error()}
	}
	var out []string
	for _, c := range s.Checks {
		for _, inv := range invariants {
			if strings.HasPrefix(c.Name, inv) && !c.OK {
				out = append(out, c.Name+": "+c.Detail)
			}
		}
	}
	return out
}

// Line describes seed's network and faults in one line.
func Line(cfg testnet.Config) string {
	adv := "no adversaries"
	if len(cfg.Adversaries) > 0 {
		adv = strings.Join(cfg.Adversaries, ",")
	}
	sched := "random pauses"
	if cfg.SlotSchedule {
		sched = "slot schedule"
	}
	return fmt.Sprintf("%d validators, %d miners, %d epochs of %v, %s, %s; %v", cfg.Validators, cfg.Miners, cfg.Epochs, cfg.EpochLength, sched, adv, cfg.Faults)
}
