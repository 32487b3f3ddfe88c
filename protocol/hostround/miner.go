package hostround

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// The miner's side of one host round (SPEC §23.8): the challenge arrives
// and is checked against what a miner may be asked, the proof runs and its
// checkpoint root goes out, the revealed secret is checked against its
// commitment, and the segments it samples are opened. Like the
// validator's, it takes events and returns actions; the caller runs the
// proof, owns the stream and its deadlines.

// MinerPlan is what a miner holds every host challenge to.
type MinerPlan struct {
	// Miner is this miner's ID: a challenge for another is refused.
	Miner []byte
	// Lag is the round trip a challenge's root deadline may allow for: a
	// deadline past RootBy(proof, Lag) is no plan's and is refused.
	Lag time.Duration
	// Admit, if set, refuses a proof larger than a plan of the network's
	// settings gives (node/plan.HostAdmissible), before any work.
	Admit func(Proof) error
}

// RevealWait is how long the miner waits for the sampling secret after
// its root: the validator reveals it as the root arrives, one trip, and a
// validator withholding it holds the miner's host lock no longer.
const RevealWait = 2 * time.Second

// Events the Miner accepts.
type (
	// Challenged: the challenge frame arrived.
	Challenged struct{ Frame []byte }
	// Proved: the caller ran the proof and committed its checkpoints to
	// Root (a windowed round: Steps a chain), or Err kept it from doing
	// so.
	Proved struct {
		Root  commit.CV
		Steps uint64
		Err   error
	}
	// Revealed: the sampling secret's frame arrived, or the error that
	// kept it.
	Revealed struct {
		Frame []byte
		Err   error
	}
	// Sent: the caller sent the opening, or Err kept it from doing so.
	Sent struct{ Err error }
)

// Actions the Miner asks for.
type (
	// Prove: run the challenge's proof and commit its checkpoints.
	Prove struct{ Challenge *Challenge }
	// SendRoot: send the checkpoint root, and for a windowed round the
	// steps a chain (RootFrame).
	SendRoot struct {
		Root  commit.CV
		Steps uint64
	}
	// Open: open these segments (ascending) and send the opening.
	Open struct{ Segments []uint64 }
	// Served: the round is over; Err says why it was not served.
	Served struct{ Err error }
)

// Miner is the miner's side of one host round.
type Miner struct {
	p    MinerPlan
	st   state
	ch   *Challenge
	root commit.CV
}

// NewMiner returns the machine for one host round.
func NewMiner(p MinerPlan) *Miner { return &Miner{p: p} }

// Challenge is the round's decoded challenge, nil until one decodes.
func (m *Miner) Challenge() *Challenge { return m.ch }

// Done reports whether the round has finished.
func (m *Miner) Done() bool { return m.st == done }

// Step applies one event and returns the actions it causes; events that do
// not fit the state are ignored, except Closed, which ends any round in
// play.
func (m *Miner) Step(ev any) []any {
	switch e := ev.(type) {
	case Challenged:
		if m.st == idle {
			return m.challenged(e.Frame)
		}
	case Proved:
		if m.st == proving {
			return m.proved(e)
		}
	case Revealed:
		if m.st == waitSecret {
			return m.revealed(e)
		}
	case Sent:
		if m.st == opening {
			return m.served(e.Err)
		}
	case Closed:
		if m.st != done {
			return m.served(e.Err)
		}
	}
	return nil
}

// challenged decodes the challenge and checks it is this miner's, due no
// later than a plan allows and within the work bounds.
func (m *Miner) challenged(frame []byte) []any {
	ch, err := DecodeChallenge(frame)
	if err != nil {
		return m.served(err)
	}
	m.ch = ch
	pr := ch.Proof
	sh := pr.Dims()
	_, windowed := Windowed(pr) // bounded by its window, not its steps
	rootBy := time.Duration(ch.RootByMs) * time.Millisecond
	switch {
	case !bytes.Equal(pr.MinerID(), m.p.Miner):
		return m.served(errors.New("host challenge for another miner"))
	case rootBy > dueBy(pr, m.p.Lag):
		return m.served(fmt.Errorf("host challenge with its root due after %v: a plan allows at most %v", rootBy, dueBy(pr, m.p.Lag)))
	case !windowed && (sh.Chains*sh.Steps > MaxWork || sh.Steps > MaxWork):
		return m.served(fmt.Errorf("host challenge of %d×%d steps: at most %d", sh.Chains, sh.Steps, MaxWork))
	case pr.Kind() == KindPlot && sh.Chains*sh.Steps > MaxPlotWork:
		return m.served(fmt.Errorf("storage audit of %d×%d steps: at most %d", sh.Chains, sh.Steps, MaxPlotWork))
	}
	if m.p.Admit != nil {
		if err := m.p.Admit(pr); err != nil {
			return m.served(err)
		}
	}
	m.st = proving
	return []any{Prove{Challenge: ch}}
}

// dueBy is the latest root_by_ms a plan sends for pr and a round trip of
// at most lag: RootBy, rounded up to the millisecond.
func dueBy(pr Proof, lag time.Duration) time.Duration {
	return (RootBy(pr, lag) + time.Millisecond - 1).Truncate(time.Millisecond)
}

// proved sends the root; a windowed round's challenge becomes the proof
// as proven, which the secret samples.
func (m *Miner) proved(e Proved) []any {
	if e.Err != nil {
		return m.served(e.Err)
	}
	if c, ok := Windowed(m.ch.Proof); ok {
		pr, err := c.Proven(e.Steps)
		if err != nil {
			return m.served(err)
		}
		m.ch.Proof = pr
	}
	m.st, m.root = waitSecret, e.Root
	return []any{SendRoot{Root: e.Root, Steps: e.Steps}}
}

func (m *Miner) revealed(e Revealed) []any {
	switch {
	case e.Err != nil:
		return m.served(fmt.Errorf("sampling secret: %w", e.Err))
	case len(e.Frame) != 32 || sample.Commit([32]byte(e.Frame)) != m.ch.Commitment:
		return m.served(errors.New("the revealed secret does not match its commitment"))
	}
	m.st = opening
	return []any{Open{Segments: m.ch.Segments([32]byte(e.Frame), m.root)}}
}

func (m *Miner) served(err error) []any {
	m.st = done
	return []any{Served{Err: err}}
}
