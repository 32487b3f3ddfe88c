package round

import (
	"fmt"
	"slices"
	"time"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// Plan is what a validator fixes before a round starts.
type Plan struct {
	Chain      proof.Chain
	Secret     [32]byte
	Commitment [32]byte // sample.Commit(Secret), as the challenge carries it
	Samples    int      // k, over all Chain.Tiles()
	// FirstRootBy bounds the first root's arrival after Start, Deadline the
	// commitment's: a miner cannot postpone a round to free its device.
	FirstRootBy, Deadline time.Duration
	// Window is the steps of the peak-throughput window (≥ 2).
	Window int
	// MinTimed is the least time steps 1..D−1 are timed over (0: none),
	// the challenge's min_timed_ms: see Throughput.
	MinTimed time.Duration
	// OtherRoot, if set, says whether another identity committed a root
	// so far (asked when a tile fails): a copy of one is named as such.
	OtherRoot func(commit.CV) bool
}

// Events a Validator accepts. At is a reading of the caller's monotonic
// clock; only differences between readings are used.
type (
	// Start: the challenge has been sent.
	Start struct{ At time.Duration }
	// Root: a step's roots arrived on the round stream.
	Root struct {
		At    time.Duration
		Step  int
		Roots []commit.CV
	}
	// Committed: the miner's signed commitment (checked by the caller)
	// arrived, with every root, step-major.
	Committed struct {
		At    time.Duration
		Roots [][]commit.CV
	}
	// Tiles: the sampled tiles and one batch proof per group, or the error
	// that kept them from arriving. Unanswered marks an error that is no
	// answer at all (a timeout, a reset, an unreachable miner), as opposed
	// to a wrong one: the round is then missed, not failed (SPEC §18).
	Tiles struct {
		Tiles      [][]byte
		Proofs     []commit.Proof
		Err        error
		Unanswered bool
	}
	// Timer: the timer last asked for has fired.
	Timer struct{ At time.Duration }
	// Closed: the round stream broke.
	Closed struct {
		At  time.Duration
		Err error
	}
	// Abandon: the caller ends the round for Reason (a bad frame, its own
	// shutdown).
	Abandon struct{ Reason string }
)

// PeakWindow is the steps of the peak-throughput window nodes use: with
// one step of slack (SPEC.md §10) a burst gains at most 1/20 over it.
const PeakWindow = 21

// Actions a Validator asks for.
type (
	// SendBeacon: answer step Step's root on the round stream.
	SendBeacon struct {
		Step   int
		Beacon [32]byte
	}
	// SetTimer: deliver Timer at At (replaces the previous timer).
	SetTimer struct{ At time.Duration }
	// Reveal: publish the sampling secret.
	Reveal struct{}
	// Fetch: request the sampled tiles (global indices, ascending).
	Fetch struct {
		Indices []uint64
		Groups  []proof.Group
	}
	// Finish: the round is over; store and report Outcome.
	Finish struct{ Outcome Outcome }
)

// TileVerdict is one sampled tile's check.
type TileVerdict struct {
	Index  uint64 // global index
	OK     bool
	Reason string
}

// Outcome is a round's evidence and verdict.
type Outcome struct {
	Verified bool
	Reason   string // why it failed
	// Arrivals holds each root's arrival after Start, in step order.
	Arrivals []time.Duration
	Roots    [][]commit.CV
	// TFLOPS is sustained throughput, PeakTFLOPS the fastest Window; both
	// zero unless verified (SPEC.md §10).
	TFLOPS, PeakTFLOPS float64
	Indices            []uint64
	Tiles              []TileVerdict
	Proofs             []commit.Proof // one per group
	Leaves             []commit.CV    // per index, when every tile arrived
	// BadTile is the first sampled tile (in sample order) that was in its
	// root but not A·B, as served: an auditor can re-check the failure.
	BadTile *BadTile
}

// BadTile is one wrong tile as the miner served it.
type BadTile struct {
	Index uint64 // global index
	Data  []byte
}

type vstate int

const (
	vIdle vstate = iota
	vRoots
	vCommit
	vTiles
	vDone
)

// Validator is the validator's side of one round.
type Validator struct {
	p       Plan
	st      vstate
	start   time.Duration
	out     Outcome
	beacons [][32]byte
	groups  []proof.Group
}

// NewValidator returns the machine for a planned round.
func NewValidator(p Plan) (*Validator, error) {
	if err := p.Chain.Validate(); err != nil {
		return nil, err
	}
	if p.Window < 2 {
		return nil, fmt.Errorf("round: peak window of %d steps, want at least 2", p.Window)
	}
	v := &Validator{p: p}
	for j := 0; j < p.Chain.Steps; j++ {
		v.beacons = append(v.beacons, proof.Beacon(p.Secret, j))
	}
	return v, nil
}

// Done reports whether the round has finished.
func (v *Validator) Done() bool { return v.st == vDone }

// Step applies one event and returns the actions it causes.
func (v *Validator) Step(ev any) []any {
	if v.st == vDone {
		return nil
	}
	switch e := ev.(type) {
	case Start:
		if v.st != vIdle {
			return nil
		}
		v.st, v.start = vRoots, e.At
		return []any{SetTimer{At: e.At + v.p.FirstRootBy}}
	case Root:
		return v.root(e)
	case Committed:
		return v.committed(e)
	case Tiles:
		return v.tiles(e)
	case Timer:
		return v.timer(e)
	case Closed:
		if v.st == vTiles {
			return nil // tiles come over their own stream
		}
		return v.fail("round stream closed: %v", e.Err)
	case Abandon:
		return v.fail("%s", e.Reason)
	}
	return nil
}

func (v *Validator) fail(format string, args ...any) []any {
	v.st = vDone
	v.out.Verified, v.out.Reason = false, fmt.Sprintf(format, args...)
	v.out.TFLOPS, v.out.PeakTFLOPS = 0, 0
	if len(v.out.Leaves) != len(v.out.Indices) {
		v.out.Leaves, v.out.Proofs = nil, nil // a partial fetch is not auditable
	}
	return []any{Finish{Outcome: v.out}}
}

func (v *Validator) root(e Root) []any {
	next := len(v.out.Arrivals)
	switch {
	case v.st != vRoots:
		return v.fail("root for step %d after the last step", e.Step)
	case e.Step != next:
		return v.fail("root for step %d, expected step %d", e.Step, next)
	case len(e.Roots) != v.p.Chain.Subs():
		return v.fail("step %d: %d roots for %d sub-challenges", e.Step, len(e.Roots), v.p.Chain.Subs())
	case next == 0 && e.At-v.start > v.p.FirstRootBy:
		return v.fail("first root after %v, bound %v", e.At-v.start, v.p.FirstRootBy)
	case e.At-v.start > v.p.Deadline:
		return v.fail("step %d root after the %v deadline", e.Step, v.p.Deadline)
	}
	v.out.Arrivals = append(v.out.Arrivals, e.At-v.start)
	v.out.Roots = append(v.out.Roots, slices.Clone(e.Roots))
	var acts []any
	if next == 0 {
		acts = append(acts, SetTimer{At: v.start + v.p.Deadline})
	}
	// Beacon j gates step j+2; the last two steps gate nothing.
	if next+2 < v.p.Chain.Steps {
		acts = append(acts, SendBeacon{Step: next, Beacon: v.beacons[next]})
	}
	if next+1 == v.p.Chain.Steps {
		v.st = vCommit
	}
	return acts
}

func (v *Validator) committed(e Committed) []any {
	if v.st != vCommit {
		return v.fail("commitment before the last step's root")
	}
	if !slices.EqualFunc(e.Roots, v.out.Roots, slices.Equal[[]commit.CV]) {
		return v.fail("commitment roots differ from the roots sent on the round stream")
	}
	idx, err := v.p.Chain.Sample(v.p.Secret, v.p.Commitment, v.out.Roots, v.p.Samples)
	if err != nil {
		return v.fail("sample: %v", err)
	}
	v.st = vTiles
	v.out.Indices = idx
	v.groups = v.p.Chain.Groups(idx)
	return []any{Reveal{}, Fetch{Indices: idx, Groups: v.groups}}
}

func (v *Validator) timer(e Timer) []any {
	switch {
	case v.st == vRoots && len(v.out.Arrivals) == 0 && e.At-v.start >= v.p.FirstRootBy:
		return v.fail("no first root within %v", v.p.FirstRootBy)
	case (v.st == vRoots || v.st == vCommit) && e.At-v.start >= v.p.Deadline:
		return v.fail("%d of %d steps and no commitment within %v", len(v.out.Arrivals), v.p.Chain.Steps, v.p.Deadline)
	}
	return nil
}

func (v *Validator) tiles(e Tiles) []any {
	if v.st != vTiles {
		return nil
	}
	switch {
	case e.Err != nil && e.Unanswered:
		return v.fail("tile request unanswered: %v", e.Err)
	case e.Err != nil:
		return v.fail("tile request failed: %v", e.Err)
	}
	if len(e.Tiles) != len(v.out.Indices) || len(e.Proofs) != len(v.groups) {
		return v.fail("%d tiles and %d proofs for %d indices in %d groups", len(e.Tiles), len(e.Proofs), len(v.out.Indices), len(v.groups))
	}
	v.out.Proofs = e.Proofs
	steps := make([][]proof.Params, v.p.Chain.Steps)
	var first error
	for gi, g := range v.groups {
		if steps[g.Step] == nil {
			ps, err := v.p.Chain.StepParams(g.Step, v.out.Roots, v.beacons)
			if err != nil {
				return v.fail("step %d: %v", g.Step, err)
			}
			steps[g.Step] = ps
		}
		p := steps[g.Step][g.Sub]
		tiles := e.Tiles[g.First : g.First+len(g.Tiles)]
		for i, t := range tiles {
			if len(t) == p.TileBytes() {
				v.out.Leaves = append(v.out.Leaves, commit.TileCV(t, g.Tiles[i]))
			}
		}
		res := proof.CheckTiles(p, v.out.Roots[g.Step][g.Sub], v.p.Secret, g.Tiles, tiles, e.Proofs[gi], v.p.OtherRoot)
		for i := range g.Tiles {
			tv := TileVerdict{Index: v.out.Indices[g.First+i], OK: res.Err == nil}
			if res.Tiles != nil {
				tv.OK = res.Tiles[i] == nil
				if !tv.OK {
					tv.Reason = res.Tiles[i].Error()
					if v.out.BadTile == nil {
						v.out.BadTile = &BadTile{Index: tv.Index, Data: slices.Clone(tiles[i])}
					}
				}
			}
			v.out.Tiles = append(v.out.Tiles, tv)
		}
		if res.Err != nil && first == nil {
			first = fmt.Errorf("step %d sub-challenge %d: %w", g.Step, g.Sub, res.Err)
		}
	}
	if first != nil {
		return v.fail("%v", first)
	}
	v.st = vDone
	v.out.Verified = true
	v.out.TFLOPS, v.out.PeakTFLOPS = Throughput(v.out.Arrivals, StepFLOPs(v.p.Chain), v.p.Window, v.p.MinTimed)
	return []any{Finish{Outcome: v.out}}
}

// StepFLOPs is one step's work: every sub-challenge.
func StepFLOPs(c proof.Chain) float64 {
	var f float64
	for _, p := range c.Template {
		f += p.FLOPs()
	}
	return f
}

// Throughput is sustained TFLOPS, the work of steps 1..D−1 over the time
// between the first and the last root's arrival (one-way latency cancels),
// and peak TFLOPS, the same over the fastest window of w steps. Both are 0
// for fewer than two steps, or no elapsed time and no minTimed. Steps
// 1..D−1 count as taking at least minTimed, a window of w steps at least
// w/(D−1) of it: no part of a round is credited faster than the rate the
// validator sized it for, so identities sharing a device gain nothing
// from rounds that finish early while others wait (SPEC.md §10.1).
func Throughput(arrivals []time.Duration, stepFLOPs float64, w int, minTimed time.Duration) (sustained, peak float64) {
	d := len(arrivals)
	rate := func(i, j int) float64 {
		least := minTimed * time.Duration(j-i) / time.Duration(max(1, d-1))
		if dt := max(arrivals[j]-arrivals[i], least); dt > 0 {
			return float64(j-i) * stepFLOPs / dt.Seconds() / 1e12
		}
		return 0
	}
	if d < 2 {
		return 0, 0
	}
	sustained = rate(0, d-1)
	w = min(w, d-1)
	for i := 0; i+w < d; i++ {
		peak = max(peak, rate(i, i+w))
	}
	return sustained, peak
}
