// Package hostround is one host-proof round (SPEC §23.6) as the wire
// carries it and as both sides play it. wire.go is the host stream's
// protocol ID and challenge frame, proofs.go the three proofs it can carry
// (CPU, RAM, storage): their encodings, bounds, verification and credit,
// limits.go the bounds both sides hold a round to. Each side is a pure
// state machine: the validator's (this file) sends the challenge, times
// the checkpoint root, reveals the sampling secret and checks the sampled
// segments; the miner's (miner.go) checks the challenge, has the proof run,
// sends the root, checks the revealed secret and opens the segments. They
// take events and return the actions the caller performs; nothing here
// touches the network or the clock, and the proofs themselves run and are
// checked through proofs.go. The node drives both over the host stream
// (SPEC §23.8, §23.9); pog bench --host drives the validator's locally.
package hostround

import (
	"errors"
	"fmt"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// Plan is what the validator fixes before sending the challenge.
type Plan struct {
	Shape   host.Shape // the challenge's chains, steps and segment
	BoundNs float64    // the proof's per-step bound (SPEC §23.1)
	Secret  [32]byte   // the sampling secret; its commitment went with the challenge
	Params  []byte     // the challenge's canonical encoding
	Samples int        // segments to sample (capped by MaxSample)
	// MaxSample caps the sample (plot.Audit.MaxSample); 0: host.MaxSegments.
	MaxSample int
	// RTT is the round trip measured on the same connection just before
	// the challenge; it is subtracted from the root's arrival, at most
	// 1/MaxRTTDivisor of it (SPEC §23.8).
	RTT time.Duration
	// RootBy bounds the root's arrival after Start: a later root is missed.
	RootBy time.Duration
	// Check verifies the encoded opening of the sampled segments against
	// the root: the proof's decoder and Verify.
	Check func(root commit.CV, segs []uint64, opening []byte) error
	// Proven, for a round run to a window (a windowed CPU round), is the
	// challenge's proof as proven with the steps a chain the root names:
	// the sample is drawn over its shape and encoding, and Check must
	// verify against it. Nil for a round of fixed steps.
	Proven func(steps uint64) (Proof, error)
	// Window credits a windowed round over at least this elapsed time.
	Window time.Duration
}

// MaxRTTDivisor bounds the round trip subtracted from a root's arrival to
// 1/20 of it, §23.1's elapsed ≥ 20 round trips made a bound: a miner that
// delays its pings to inflate the round trip gains at most 1/0.95.
const MaxRTTDivisor = 20

// Events the Validator accepts; At is a reading of the caller's monotonic
// clock.
type (
	// Start: the challenge has been sent.
	Start struct{ At time.Duration }
	// Root: the miner's checkpoint root arrived, with the steps a chain
	// it proved if the round ran to a window.
	Root struct {
		At    time.Duration
		Root  commit.CV
		Steps uint64
	}
	// Opening: the encoded opening arrived, or the error that kept it.
	Opening struct {
		Bytes []byte
		Err   error
	}
	// Timer: the timer last asked for fired.
	Timer struct{ At time.Duration }
	// Closed: the stream broke.
	Closed struct{ Err error }
)

// Actions the Validator asks for.
type (
	// SetTimer: deliver Timer at At.
	SetTimer struct{ At time.Duration }
	// Reveal: send the sampling secret.
	Reveal struct{}
	// Fetch: request the opening of these segments (ascending).
	Fetch struct{ Segments []uint64 }
	// Finish: the round is over; store and report Outcome.
	Finish struct{ Outcome Outcome }
)

// Outcome is a host round's evidence and verdict. Missed means nothing was
// proven (no root in time, a broken stream); a failed round that is not
// missed is a proven fault.
type Outcome struct {
	Verified bool
	Missed   bool
	Reason   string
	Root     commit.CV
	Elapsed  time.Duration // root arrival − Start − RTT (capped)
	StepNs   float64       // per chain step, over at least the window
	Credit   float64       // min(1, BoundNs/StepNs); 0 unless verified
	Segments []uint64
}

type state int

const (
	idle        state = iota
	waitRoot          // validator
	waitOpening       // validator
	proving           // miner
	waitSecret        // miner
	opening           // miner
	done
)

// Validator is the validator's side of one host round.
type Validator struct {
	p     Plan
	st    state
	start time.Duration
	out   Outcome
}

// NewValidator returns the machine for a planned round.
func NewValidator(p Plan) (*Validator, error) {
	switch {
	case p.Shape.Check() != nil:
		return nil, p.Shape.Check()
	case !(p.BoundNs > 0):
		return nil, errors.New("host round: the step bound must be positive")
	case p.Samples < 1 || p.RootBy <= 0 || p.RTT < 0 || p.Check == nil:
		return nil, errors.New("host round: need a sample, a positive root deadline, a non-negative round trip and a check")
	}
	return &Validator{p: p}, nil
}

// Done reports whether the round has finished.
func (v *Validator) Done() bool { return v.st == done }

// Step applies one event and returns the actions it causes; events that do
// not fit the state (a second root, a timer after the root) are ignored.
func (v *Validator) Step(ev any) []any {
	switch e := ev.(type) {
	case Start:
		if v.st == idle {
			v.st, v.start = waitRoot, e.At
			return []any{SetTimer{At: e.At + v.p.RootBy}}
		}
	case Root:
		if v.st == waitRoot {
			return v.root(e)
		}
	case Timer:
		if v.st == waitRoot && e.At >= v.start+v.p.RootBy {
			return v.finish(true, fmt.Sprintf("no root within %v", v.p.RootBy))
		}
	case Opening:
		if v.st == waitOpening {
			return v.opening(e)
		}
	case Closed:
		if v.st == waitRoot {
			return v.finish(true, fmt.Sprintf("stream closed: %v", e.Err))
		}
		if v.st == waitOpening {
			// The root is committed: refusing to open it is a fault.
			return v.finish(false, fmt.Sprintf("stream closed before the opening: %v", e.Err))
		}
	}
	return nil
}

func (v *Validator) root(e Root) []any {
	if e.At-v.start > v.p.RootBy {
		return v.finish(true, fmt.Sprintf("no root within %v", v.p.RootBy))
	}
	v.out.Root = e.Root
	if v.p.Proven != nil {
		pr, err := v.p.Proven(e.Steps)
		if err != nil {
			return v.finish(false, fmt.Sprintf("root of a windowed round: %v", err))
		}
		v.p.Shape, v.p.Params = pr.Dims(), pr.Encode()
	}
	arrival := e.At - v.start
	v.out.Elapsed = max(arrival-min(v.p.RTT, arrival/MaxRTTDivisor), time.Nanosecond)
	v.out.StepNs = v.timing().StepNs()
	k := v.p.Samples
	if v.p.MaxSample > 0 {
		k = min(k, v.p.MaxSample)
	}
	v.out.Segments = host.Sample(v.p.Secret, e.Root, v.p.Params, v.p.Shape, k)
	v.st = waitOpening
	return []any{Reveal{}, Fetch{Segments: v.out.Segments}}
}

func (v *Validator) opening(e Opening) []any {
	if e.Err != nil {
		return v.finish(false, fmt.Sprintf("opening not received: %v", e.Err))
	}
	if err := v.p.Check(v.out.Root, v.out.Segments, e.Bytes); err != nil {
		return v.finish(false, fmt.Sprintf("opening: %v", err))
	}
	v.out.Verified = true
	v.out.Credit = v.timing().Credit(v.p.BoundNs)
	v.st = done
	return []any{Finish{Outcome: v.out}}
}

// timing is the root's elapsed time, at least the window, over the shape.
func (v *Validator) timing() host.Timing {
	return host.Timing{Shape: v.p.Shape, Elapsed: max(v.out.Elapsed, v.p.Window)}
}

func (v *Validator) finish(missed bool, reason string) []any {
	v.out.Missed, v.out.Reason = missed, reason
	v.st = done
	return []any{Finish{Outcome: v.out}}
}
