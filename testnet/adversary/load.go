package adversary

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/pog-network/pog/testnet/report"
)

// The loaded miner is honest: miner-1's profile with a CPU-heavy job
// beside it for part of every epoch, as an operator running a benchmark
// on the miner's machine. Its host CPU steps, and a CPU-only miner's
// device, run loadSlowdown times slower while the job runs. Only a
// simulated run models the job (simulated hosts, virtual time).
const (
	// loadParts: the job runs for 1/loadParts of each epoch.
	loadParts = 3
	// loadSlowdown: two runnable threads per core and more.
	loadSlowdown = 4
	// loadedBound is how far the loaded miner's consensus weight may fall
	// below its twin's in any epoch (SPEC §23.9: a host set clean of the
	// load in every three, the best of each kind counting).
	loadedBound = 0.10
)

// Load is the loaded miner's job: in each epoch it starts at a point
// drawn from the seed and the epoch, at most (1 − 1/loadParts)·L in.
type Load struct {
	Seed   uint64
	Length time.Duration
}

// factor is how many times longer CPU work started at t takes (1 for a
// nil load).
func (l *Load) factor(t time.Time) float64 {
	if l == nil {
		return 1
	}
	e := uint64(t.UnixNano() / int64(l.Length))
	dur := l.Length / loadParts
	from := time.Duration(rand.New(rand.NewPCG(l.Seed, e)).Int64N(int64(l.Length - dur)))
	if at := time.Duration(t.UnixNano() % int64(l.Length)); at >= from && at < from+dur {
		return loadSlowdown
	}
	return 1
}

// LoadedCheck compares the loaded miner with its twin, miner-1, in every
// summarised epoch: their consensus weights differ by at most loadedBound.
func LoadedCheck(s *report.Summary) report.Check {
	name := fmt.Sprintf("a CPU job beside the loaded miner for 1/%d of each epoch moves its weight ≤ %.0f%% from its twin's", loadParts, 100*loadedBound)
	ok, detail := true, ""
	for _, e := range s.Epochs {
		l, m := e.Consensus["loaded"], e.Consensus["miner-1"]
		ratio := l / m
		if m <= 0 || ratio < 1-loadedBound || ratio > 1+loadedBound {
			ok = false
		}
		detail += fmt.Sprintf("full epoch %d: %.3f; ", e.Epoch-s.Epochs[0].Epoch+1, ratio)
	}
	return report.Check{Name: name, OK: ok && len(s.Epochs) > 0, Detail: "loaded ÷ miner-1 weight: " + detail}
}
