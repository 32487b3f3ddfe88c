package round

import (
	"fmt"
	"slices"
	"time"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// Events a Miner accepts.
type (
	// StepDone: the caller finished computing step Step; Roots are its
	// sub-challenges' roots.
	StepDone struct {
		Step  int
		Roots []commit.CV
	}
	// BeaconIn: the validator's answer to step Step's root.
	BeaconIn struct {
		Step   int
		Beacon [32]byte
	}
	// ResultIn: the validator's verdict at round end.
	ResultIn struct{ Result Result }
)

// Result is what the validator tells the miner at the end of a round.
type Result struct {
	Verified           bool
	Reason             string
	TFLOPS, PeakTFLOPS float64
}

// Actions a Miner asks for.
type (
	// Compute: run step Step with these parameters, one per sub-challenge.
	Compute struct {
		Step   int
		Params []proof.Params
	}
	// SendRoot: send step Step's roots on the round stream.
	SendRoot struct {
		Step  int
		Roots []commit.CV
	}
	// Commit: sign and publish the commitment to every root, step-major.
	Commit struct{ Roots [][]commit.CV }
	// Report: the round is over; Result is the validator's verdict.
	Report struct{ Result Result }
	// Abort: the round cannot go on (Reason says why).
	Abort struct{ Reason string }
)

// Miner is the miner's side of one round. Hold makes it keep roots back
// until it cannot go on without a beacon and then send them in a burst:
// the testnet's burst adversary, which SPEC.md §10 shows gains nothing.
type Miner struct {
	c       proof.Chain
	Hold    bool
	roots   [][]commit.CV
	beacons [][32]byte
	sent    int // roots sent so far (steps 0..sent−1)
	busy    bool
	done    bool
}

// NewMiner returns the machine for a round of chain c.
func NewMiner(c proof.Chain) (*Miner, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Miner{c: c}, nil
}

// Waiting says whether the miner waits for a beacon: no step computing,
// its chain unfinished and the round not over.
func (m *Miner) Waiting() bool { return !m.done && !m.busy && len(m.roots) < m.c.Steps }

// Stall adds up the time a miner waits for beacons in one round. An honest
// validator answers each root on arrival and its plan sizes each step over
// 1.25 round trips, so its miner hardly waits; a validator withholding
// beacons would hold the miner's queue place until the round's deadline,
// up to an hour. The caller ends the round once the waits pass its budget.
type Stall struct {
	spent time.Duration
	since time.Time // start of the wait in progress; zero if none
}

// Note records whether the miner waits for a beacon at now.
func (s *Stall) Note(waiting bool, now time.Time) {
	switch {
	case waiting && s.since.IsZero():
		s.since = now
	case !waiting && !s.since.IsZero():
		s.spent += now.Sub(s.since)
		s.since = time.Time{}
	}
}

// Left is how much of budget the waits leave at now: the time to the end
// of the round if the wait in progress goes on, ≤ 0 once spent.
func (s *Stall) Left(budget time.Duration, now time.Time) time.Duration {
	left := budget - s.spent
	if !s.since.IsZero() {
		left -= now.Sub(s.since)
	}
	return left
}

// Begin starts the round: it asks for step 0.
func (m *Miner) Begin() []any { return m.advance() }

// Step applies one event and returns the actions it causes.
func (m *Miner) Step(ev any) []any {
	if m.done {
		return nil
	}
	switch e := ev.(type) {
	case StepDone:
		return m.stepDone(e)
	case BeaconIn:
		if e.Step != len(m.beacons) || e.Step >= m.sent {
			return m.abort("beacon for step %d out of order (%d beacons, %d roots sent)", e.Step, len(m.beacons), m.sent)
		}
		m.beacons = append(m.beacons, e.Beacon)
		return m.advance()
	case ResultIn:
		// Also ends a round the validator gave up on early.
		m.done = true
		return []any{Report{Result: e.Result}}
	case Closed:
		return m.abort("round stream closed: %v", e.Err)
	}
	return nil
}

func (m *Miner) abort(format string, args ...any) []any {
	m.done = true
	return []any{Abort{Reason: fmt.Sprintf(format, args...)}}
}

func (m *Miner) stepDone(e StepDone) []any {
	if !m.busy || e.Step != len(m.roots) || len(e.Roots) != m.c.Subs() {
		return m.abort("unexpected result for step %d", e.Step)
	}
	m.busy = false
	m.roots = append(m.roots, slices.Clone(e.Roots))
	var acts []any
	if !m.Hold {
		acts = m.flush()
	}
	if len(m.roots) == m.c.Steps {
		acts = append(acts, m.flush()...)
		return append(acts, Commit{Roots: m.roots})
	}
	return append(acts, m.advance()...)
}

// flush sends every root not sent yet.
func (m *Miner) flush() []any {
	var acts []any
	for ; m.sent < len(m.roots); m.sent++ {
		acts = append(acts, SendRoot{Step: m.sent, Roots: m.roots[m.sent]})
	}
	return acts
}

// advance starts the next step when its inputs are in: the previous step's
// roots and, from step 2 on, the beacon answering step i−2.
func (m *Miner) advance() []any {
	i := len(m.roots)
	if m.busy || i >= m.c.Steps {
		return nil
	}
	if i >= 2 && len(m.beacons) < i-1 {
		if m.Hold && m.sent < len(m.roots) {
			return m.flush() // blocked: release what was held
		}
		return nil
	}
	ps, err := m.c.StepParams(i, m.roots, m.beacons)
	if err != nil {
		return m.abort("%v", err)
	}
	m.busy = true
	return []any{Compute{Step: i, Params: ps}}
}
