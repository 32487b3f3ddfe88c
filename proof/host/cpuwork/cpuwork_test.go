package cpuwork

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/host"
)

func tiny(miner string) *Params {
	p := &Params{Miner: []byte(miner), TableLog: MinTableLog, Shape: host.Shape{Chains: 3, Steps: 256, Segment: 32}}
	p.Seed[0] = 7
	return p
}

// prove commits an honest proof and opens every segment, so each check
// below is certain to see the segment it corrupts.
func prove(t *testing.T, p *Params) (states [][]byte, root [32]byte, segs []uint64, op *host.Opening) {
	t.Helper()
	states, err := Prove(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	return commitAll(t, p, states)
}

func commitAll(t *testing.T, p *Params, states [][]byte) ([][]byte, [32]byte, []uint64, *host.Opening) {
	t.Helper()
	root, leaves, err := host.Commit(Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	segs := host.Sample([32]byte{1}, root, p.Encode(), p.Shape, int(p.Leaves()))
	op, err := host.Open(p.Shape, states, leaves, segs)
	if err != nil {
		t.Fatal(err)
	}
	return states, root, segs, op
}

func TestHonestVerifies(t *testing.T) {
	p := tiny("miner A")
	_, root, segs, op := prove(t, p)
	if err := Verify(p, root, segs, op); err != nil {
		t.Fatal(err)
	}
	// One worker and many give the same checkpoints.
	a, _ := Prove(p, 1)
	b, _ := Prove(p, 8)
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("checkpoint %d depends on the worker count", i)
		}
	}
}

func TestRunMatchesStepDefinition(t *testing.T) {
	tab := []uint64{10, 20, 30, 40}
	var x State
	for j := range x {
		x[j] = uint64(j) * 0x1234567
	}
	want := x
	for j := range want {
		v, next := tab[x[j]&3], tab[x[(j+1)%Lanes]&3]
		want[j] = ((x[j]^v)*mul<<29 | (x[j]^v)*mul>>35) + next
	}
	if Run(tab, &x, 1); x != want {
		t.Fatalf("one step: %x, want %x", x, want)
	}
}

func TestBadProofs(t *testing.T) {
	cases := []struct {
		name   string
		cheat  func(p *Params, states [][]byte) ([][]byte, *Params)
		reason error
		text   string
	}{
		{"wrong checkpoint committed", func(p *Params, st [][]byte) ([][]byte, *Params) {
			st[5] = make([]byte, StateBytes)
			return st, p
		}, ErrSegment, "segment 5 (chain 0, steps 160–191)"},
		{"lazy chain: last half of chain 2 invented", func(p *Params, st [][]byte) ([][]byte, *Params) {
			for j := 20; j < 24; j++ {
				st[j] = make([]byte, StateBytes)
				st[j][0] = byte(j)
			}
			return st, p
		}, ErrSegment, "chain 2"},
		{"proof for another identity", func(p *Params, st [][]byte) ([][]byte, *Params) {
			return st, tiny("miner B")
		}, ErrSegment, "segment 0 (chain 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := tiny("miner A")
			honest, err := Prove(p, 2)
			if err != nil {
				t.Fatal(err)
			}
			st, vp := c.cheat(p, honest)
			_, root, segs, op := commitAll(t, p, st)
			err = Verify(vp, root, segs, op)
			if !errors.Is(err, c.reason) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("verdict %v, want %v mentioning %q", err, c.reason, c.text)
			}
		})
	}
}

func TestTamperedOpeningFailsInclusion(t *testing.T) {
	p := tiny("miner A")
	_, root, segs, op := prove(t, p)
	op.States[3] = make([]byte, StateBytes)
	if err := Verify(p, root, segs, op); !errors.Is(err, host.ErrCheckpoint) {
		t.Fatalf("verdict %v, want a checkpoint inclusion failure", err)
	}
}

func TestParamsBounds(t *testing.T) {
	for _, mut := range []func(*Params){
		func(p *Params) { p.TableLog = MaxTableLog + 1 },
		func(p *Params) { p.Miner = nil },
		func(p *Params) { p.Segment = 33 },
		func(p *Params) { p.Chains = 0 },
		func(p *Params) { p.Chains, p.Steps, p.Segment = 1<<20, 1<<20, 1 },
	} {
		p := tiny("m")
		mut(p)
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p.Shape)
		}
	}
}

// TestProveUntil: a windowed round stops every chain at the same whole
// number of segments, the first a worker ends past the deadline (one,
// with the deadline already past; two for one chain), or at the cap (a
// deadline far off);
// the states are a fixed round's over the proven parameters, and verify.
func TestProveUntil(t *testing.T) {
	p := tiny("miner W")
	p.WindowMs, p.RunMs = 1000, 1000
	for _, c := range []struct {
		name     string
		deadline time.Time
		want     uint64
	}{
		{"past", time.Now().Add(-time.Second), p.Segment},
		{"far", time.Now().Add(time.Hour), p.Steps},
	} {
		for _, workers := range []int{1, 2, 5} {
			n, states, err := ProveUntil(p, workers, c.deadline)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want {
				t.Errorf("%s, %d workers: %d steps a chain, want %d", c.name, workers, n, c.want)
				continue
			}
			q, err := p.Proven(n)
			if err != nil {
				t.Fatal(err)
			}
			fixed, _ := Prove(q, 1)
			if !slices.EqualFunc(states, fixed, bytes.Equal) {
				t.Errorf("%s, %d workers: states differ from a fixed round of %d steps", c.name, workers, n)
			}
			_, root, segs, op := commitAll(t, q, states)
			if err := Verify(q, root, segs, op); err != nil {
				t.Errorf("%s, %d workers: %v", c.name, workers, err)
			}
		}
	}
	one := *p
	one.Chains = 1
	if n, _, err := ProveUntil(&one, 2, time.Now().Add(-time.Second)); err != nil || n != 2*one.Segment {
		t.Errorf("one chain, the deadline past: %d steps (%v), want two segments", n, err)
	}
	if _, err := p.Proven(p.Steps + p.Segment); err == nil {
		t.Error("proven beyond the cap")
	}
	if _, err := p.Proven(p.Segment + 1); err == nil {
		t.Error("proven a part of a segment")
	}
}
