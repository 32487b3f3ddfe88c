package miner

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/round"
)

// A miner keeps no round evidence (validators do), so what it knows of its
// own work is what its validators tell it at the end of each round, and the
// host rounds it served. It keeps the latest of each in memory for the
// local API: the store's records are a validator's signed evidence, and a
// miner's view of its results is neither evidence nor needed after a
// restart. Both lists are bounded, so a validator that plays many rounds
// only pushes older entries out.

// Bounds on what a miner remembers of its rounds.
const (
	playedRounds     = 512
	playedHostRounds = 128
	playedReasonLen  = 512 // a validator's reason is cut to this many bytes
)

// PlayedRound is a GPU round this miner played and what its validator
// reported at the end.
type PlayedRound struct {
	Validator    peer.ID
	Epoch, Round uint64
	Steps        int
	Probe        bool // a sizing round, not scored
	At           time.Time
	Verdict      string // verified, failed, abandoned (no result came), or refused (beyond what a plan gives)
	Reason       string
	TFLOPS, Peak float64
}

// PlayedHostRound is a host round a validator opened with this miner. The
// validator keeps its verdict; the miner knows whether it answered in time.
type PlayedHostRound struct {
	Validator     peer.ID
	At            time.Time
	Kind          string // cpu, ram, storage; empty if the challenge did not decode
	Chains, Steps uint64
	Prove, RootBy time.Duration // proving time; the root's deadline
	Served        bool          // root and opening sent
	Error         string        // why not
}

// played is a miner's bounded record of its rounds, oldest first.
type played struct {
	mu     sync.Mutex
	rounds []PlayedRound
	hosts  []PlayedHostRound
}

// result notes a round's end: its validator's result, or abandonment.
func (p *played) result(c *Challenge, steps int, res *round.Result, abandoned string) {
	r := PlayedRound{Validator: c.Validator, Epoch: c.Msg.Epoch, Round: c.Msg.Round, Steps: steps,
		Probe: c.Msg.Probe, At: time.Now(), Verdict: "abandoned", Reason: clip(abandoned)}
	if res != nil {
		r.Verdict, r.Reason, r.TFLOPS, r.Peak = "failed", clip(res.Reason), finite(res.TFLOPS), finite(res.PeakTFLOPS)
		if res.Verified {
			r.Verdict = "verified"
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rounds = appendBounded(p.rounds, r, playedRounds)
}

// refused notes a challenge refused for its size, before any work.
func (p *played) refused(c *Challenge, err error) {
	r := PlayedRound{Validator: c.Validator, Epoch: c.Msg.Epoch, Round: c.Msg.Round, Steps: int(c.Msg.Steps),
		Probe: c.Msg.Probe, At: time.Now(), Verdict: "refused", Reason: clip(err.Error())}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rounds = appendBounded(p.rounds, r, playedRounds)
}

// host notes a host round's end.
func (p *played) host(h PlayedHostRound, err error) {
	h.Served = err == nil
	if err != nil {
		h.Error = clip(err.Error())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts = appendBounded(p.hosts, h, playedHostRounds)
}

// snapshot copies both lists.
func (p *played) snapshot() ([]PlayedRound, []PlayedHostRound) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PlayedRound(nil), p.rounds...), append([]PlayedHostRound(nil), p.hosts...)
}

// appendBounded appends x, dropping the oldest entries beyond n.
func appendBounded[T any](s []T, x T, n int) []T {
	if len(s) >= n {
		s = append(s[:0], s[len(s)-n+1:]...)
	}
	return append(s, x)
}

// clip bounds a peer's text, keeping it valid UTF-8.
func clip(s string) string {
	if len(s) > playedReasonLen {
		s = s[:playedReasonLen]
	}
	return strings.ToValidUTF8(s, "")
}

// finite keeps a validator's non-finite figure (which JSON cannot carry)
// out of the API.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
