package adversary

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
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
	// loadedExact is how far the loaded miner's figures may be from what
	// virtual time makes exact: its CPU part is its twin's in every host
	// slot clear of the job, and it gains nothing from the job.
	loadedExact = 0.01
)

// Load is the loaded miner's job: in each epoch it starts at a point
// drawn from the seed and the epoch, at most (1 − 1/loadParts)·L in. It
// notes when each host CPU proof ran.
type Load struct {
	Seed   uint64
	Length time.Duration
	mu     sync.Mutex
	cpuAt  []time.Time
}

// cpuFactor is factor for a host CPU proof started at t, noted.
func (l *Load) cpuFactor(t time.Time) float64 {
	if l == nil {
		return 1
	}
	l.mu.Lock()
	l.cpuAt = append(l.cpuAt, t)
	l.mu.Unlock()
	return l.factor(t)
}

// CleanShare is, of the host CPU proofs that ran at times keep selects,
// the share clear of the job, and how many there were.
func (l *Load) CleanShare(keep func(time.Time) bool) (float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, clean := 0, 0
	for _, t := range l.cpuAt {
		if keep(t) {
			n++
			if l.factor(t) == 1 {
				clean++
			}
		}
	}
	return float64(clean) / float64(max(n, 1)), n
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

// LoadedCheck judges the loaded miner against its twin, miner-1, in
// every summarised epoch: an honest host is credited its mean rate over
// host slots (SPEC §23.8), so per validator its CPU part is at least its
// twin's times the share of that validator's host slots clear of the job
// in which it was measured (a slot under the job credits less, never
// more; one its device's overrunning round held is skipped, SPEC §16),
// and it earns no more than its twin.
func LoadedCheck(s *report.Summary) report.Check {
	name := fmt.Sprintf("a CPU job beside the loaded miner for 1/%d of each epoch costs it only the host slots it covers, and gains it nothing", loadParts)
	ok, detail, judged := true, "", 0
	for _, e := range s.Epochs {
		w := e.Consensus["loaded"] / e.Consensus["miner-1"]
		if !(w <= 1+loadedExact) {
			ok = false
		}
		detail += fmt.Sprintf("full epoch %d: weight %.3f", e.Epoch-s.Epochs[0].Epoch+1, w)
		for _, v := range slices.Sorted(maps.Keys(e.Loaded)) {
			l := e.Loaded[v]
			judged++
			if !(l.Twin > 0 && l.Loaded <= l.Twin*(1+loadedExact) && l.Loaded >= l.Twin*l.Clean*(1-loadedExact)) {
				ok = false
			}
			detail += fmt.Sprintf(", %s CPU %.4g ÷ %.4g (clear %d/%d)", v, l.Loaded, l.Twin, int(l.Clean*float64(l.Proofs)+0.5), l.Proofs)
		}
		detail += "; "
	}
	return report.Check{Name: name, OK: ok && judged > 0, Detail: "loaded ÷ miner-1: " + detail}
}
