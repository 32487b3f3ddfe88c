package hostround

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/sample"
)

// cpuRound is a tiny CPU challenge, its honest checkpoints and a plan
// whose Check is cpuwork's.
func cpuRound(t *testing.T) (Plan, [][]byte, []commit.CV, commit.CV) {
	t.Helper()
	p := &cpuwork.Params{Miner: []byte("miner"), TableLog: cpuwork.MinTableLog, Shape: host.Shape{Chains: 2, Steps: 1000, Segment: 10}}
	states, err := cpuwork.Prove(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	root, leaves, err := host.Commit(cpuwork.Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan{Shape: p.Shape, BoundNs: 100, Secret: [32]byte{7}, Params: p.Encode(), Samples: 8,
		RTT: 10 * time.Microsecond, RootBy: time.Second,
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			op, err := host.DecodeOpening(b, cpuwork.StateBytes)
			if err != nil {
				return err
			}
			return cpuwork.Verify(p, root, segs, op)
		}}
	return plan, states, leaves, root
}

func finish(t *testing.T, acts []any) Outcome {
	t.Helper()
	for _, a := range acts {
		if f, ok := a.(Finish); ok {
			return f.Outcome
		}
	}
	t.Fatalf("no Finish in %#v", acts)
	return Outcome{}
}

func TestHonestRound(t *testing.T) {
	plan, states, leaves, root := cpuRound(t)
	v, err := NewValidator(plan)
	if err != nil {
		t.Fatal(err)
	}
	if acts := v.Step(Start{At: 10 * time.Second}); len(acts) != 1 || acts[0] != (SetTimer{At: 11 * time.Second}) {
		t.Fatalf("start: %#v", acts)
	}
	// Each chain's 1000 steps took 0.2 ms after the 2 ms round trip: 200 ns
	// per step, twice the bound.
	acts := v.Step(Root{At: 10*time.Second + 210*time.Microsecond, Root: root})
	if len(acts) != 2 || acts[0] != (Reveal{}) {
		t.Fatalf("root: %#v", acts)
	}
	segs := acts[1].(Fetch).Segments
	if len(segs) != 8 {
		t.Fatalf("fetch %v", segs)
	}
	op, err := host.Open(plan.Shape, states, leaves, segs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := op.MarshalBinary()
	out := finish(t, v.Step(Opening{Bytes: b}))
	if !out.Verified || out.Missed || out.Elapsed != 200*time.Microsecond || out.StepNs != 200 || out.Credit != 0.5 {
		t.Fatalf("outcome %+v", out)
	}
	if !v.Done() || v.Step(Opening{Bytes: b}) != nil {
		t.Fatal("a finished round took another event")
	}
}

func TestRoundVerdicts(t *testing.T) {
	plan, _, _, root := cpuRound(t)
	cases := []struct {
		name   string
		events []any
		missed bool
		reason string
	}{
		{"no root", []any{Start{}, Timer{At: time.Second}}, true, "no root within 1s"},
		{"late root", []any{Start{}, Root{At: 2 * time.Second, Root: root}}, true, "no root within 1s"},
		{"stream closed before the root", []any{Start{}, Closed{Err: errors.New("reset")}}, true, "stream closed: reset"},
		{"refuses to open", []any{Start{}, Root{At: time.Millisecond, Root: root}, Closed{Err: errors.New("eof")}}, false, "stream closed before the opening"},
		{"opening lost", []any{Start{}, Root{At: time.Millisecond, Root: root}, Opening{Err: errors.New("timeout")}}, false, "opening not received: timeout"},
		{"garbage opening", []any{Start{}, Root{At: time.Millisecond, Root: root}, Opening{Bytes: []byte{1, 2}}}, false, "opening: opening: truncated count"},
		{"root of other checkpoints", []any{Start{}, Root{At: time.Millisecond, Root: commit.CV{9}}, Opening{Bytes: emptyOpening(t)}}, false, "opening: checkpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := NewValidator(plan)
			if err != nil {
				t.Fatal(err)
			}
			var acts []any
			for _, ev := range c.events {
				acts = append(acts, v.Step(ev)...)
			}
			out := finish(t, acts)
			if out.Verified || out.Missed != c.missed || !strings.Contains(out.Reason, c.reason) || out.Credit != 0 {
				t.Fatalf("outcome %+v, want missed=%v and %q", out, c.missed, c.reason)
			}
		})
	}
}

func emptyOpening(t *testing.T) []byte {
	b, err := (&host.Opening{}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEarlyTimerAndStrayEventsIgnored(t *testing.T) {
	plan, _, _, root := cpuRound(t)
	v, _ := NewValidator(plan)
	if v.Step(Root{At: 0, Root: root}) != nil || v.Step(Opening{}) != nil {
		t.Fatal("events before Start were acted on")
	}
	v.Step(Start{At: 5})
	if v.Step(Timer{At: 6}) != nil {
		t.Fatal("a stale timer ended the round")
	}
	if v.Done() {
		t.Fatal("done too early")
	}
}

func TestPlanBounds(t *testing.T) {
	plan, _, _, _ := cpuRound(t)
	for _, mut := range []func(*Plan){
		func(p *Plan) { p.BoundNs = 0 },
		func(p *Plan) { p.Samples = 0 },
		func(p *Plan) { p.RootBy = 0 },
		func(p *Plan) { p.RTT = -1 },
		func(p *Plan) { p.Check = nil },
		func(p *Plan) { p.Shape.Segment = 3 },
	} {
		p := plan
		mut(&p)
		if _, err := NewValidator(p); err == nil {
			t.Errorf("accepted %+v", p.Shape)
		}
	}
}

// TestWindowedRound plays a CPU round run to a window through both
// machines: the miner proves 300 of the cap's 1000 steps a chain, the
// validator samples and checks the proof as proven (the segments it
// fetches are the ones the miner opens), and a root sent early is timed
// over the whole window; steps past the cap fail the round.
func TestWindowedRound(t *testing.T) {
	c := CPUProof{Params: &cpuwork.Params{Miner: []byte("miner"), TableLog: cpuwork.MinTableLog, WindowMs: 2000, RunMs: 2000,
		Shape: host.Shape{Chains: 2, Steps: 1000, Segment: 10}}}
	secret := [32]byte{7}
	proven, err := c.Proven(300)
	if err != nil {
		t.Fatal(err)
	}
	states, err := cpuwork.Prove(proven.Params, 1)
	if err != nil {
		t.Fatal(err)
	}
	root, leaves, err := host.Commit(cpuwork.Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	plan := func() Plan {
		var got Proof = c
		return Plan{Shape: c.Shape, BoundNs: c.BoundNs(), Secret: secret, Params: c.Encode(), Samples: 8, RootBy: RootBy(c, 0),
			Window: c.Window(), Proven: func(n uint64) (Proof, error) {
				q, err := c.Proven(n)
				got = q
				return q, err
			},
			Check: func(root commit.CV, segs []uint64, b []byte) error { return got.Verify(root, segs, b) }}
	}
	m := NewMiner(MinerPlan{Miner: []byte("miner"), Lag: time.Second})
	ch := Challenge{Commitment: sample.Commit(secret), Samples: 8, RootByMs: uint32(RootBy(c, 0).Milliseconds()), Proof: c}
	m.Step(Challenged{Frame: ch.Encode()})
	if acts := m.Step(Proved{Root: root, Steps: 300}); len(acts) != 1 || acts[0] != (SendRoot{Root: root, Steps: 300}) {
		t.Fatalf("proved: %#v", acts)
	}
	open := m.Step(Revealed{Frame: secret[:]})[0].(Open)
	v, err := NewValidator(plan())
	if err != nil {
		t.Fatal(err)
	}
	v.Step(Start{})
	fetch := v.Step(Root{At: 100 * time.Millisecond, Root: root, Steps: 300})[1].(Fetch)
	if fmt.Sprint(open.Segments) != fmt.Sprint(fetch.Segments) || fetch.Segments[len(fetch.Segments)-1] >= proven.Leaves() {
		t.Fatalf("miner opens %v, validator fetches %v, of %d leaves", open.Segments, fetch.Segments, proven.Leaves())
	}
	op, err := host.Open(proven.Shape, states, leaves, open.Segments)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := op.MarshalBinary()
	out := finish(t, v.Step(Opening{Bytes: b}))
	if want := float64(2*time.Second) / 300; !out.Verified || out.Elapsed != 100*time.Millisecond || out.StepNs != want {
		t.Fatalf("early root: verified %v, elapsed %v, %.0f ns a step, want %.0f (over the window)", out.Verified, out.Elapsed, out.StepNs, want)
	}
	if got, want := proven.Credited(100*time.Millisecond).CPUStepsPerSecond, 2*300/2.0*out.Credit; got != want {
		t.Fatalf("credited %v steps/s, want %v", got, want)
	}
	v, _ = NewValidator(plan())
	v.Step(Start{})
	if out := finish(t, v.Step(Root{At: time.Second, Root: root, Steps: 1010})); out.Verified || out.Missed || !strings.Contains(out.Reason, "windowed") {
		t.Fatalf("steps past the cap: %+v", out)
	}
}

// TestRootFrame: a windowed round's root frame carries the steps after
// the root and round-trips; a frame of any other length is refused.
func TestRootFrame(t *testing.T) {
	root := commit.CV{1, 2, 3}
	for _, windowed := range []bool{false, true} {
		b := RootFrame(root, windowed, 4096)
		r, n, err := DecodeRootFrame(b, windowed)
		if want := map[bool]uint64{false: 0, true: 4096}[windowed]; err != nil || r != root || n != want {
			t.Fatalf("windowed %v: %x, %d steps, %v", windowed, r[:3], n, err)
		}
		for _, bad := range [][]byte{nil, b[:len(b)-1], append(append([]byte{}, b...), 0)} {
			if _, _, err := DecodeRootFrame(bad, windowed); err == nil {
				t.Errorf("windowed %v: a root frame of %d bytes decoded", windowed, len(bad))
			}
		}
	}
}
