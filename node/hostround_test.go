package node

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof/host/cpuwork"
)

// hostPair starts a validator that plays no rounds of its own and a miner
// proving with prove (nil: cpuwork.Prove), connected.
func hostPair(t *testing.T, prove func(*cpuwork.Params) ([][]byte, error)) (*Node, *Node) {
	tn := newTestNet(t)
	cfg := testConfig()
	cfg.Validator.RoundOffset = Duration{time.Hour} // runHost is called directly
	v := tn.start(RoleValidator, cfg, nil)
	m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.RoundHooks.HostProve = prove })
	tn.connect(m, v)
	return v, m
}

func TestHostRoundVerified(t *testing.T) {
	v, m := hostPair(t, nil)
	res, err := v.validator.runHost(t.Context(), m.ID(), nil, 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	o := res.out
	if !o.Verified || o.Missed || o.Reason != "" {
		t.Fatalf("honest host round: verified %v missed %v reason %q", o.Verified, o.Missed, o.Reason)
	}
	if len(o.Segments) != hostSamples || !(o.StepNs > 0) || !(o.Credit > 0 && o.Credit <= 1) {
		t.Fatalf("outcome %d segments, %.1f ns/step, credit %v", len(o.Segments), o.StepNs, o.Credit)
	}
	if res.plan.ch.CPU.Chains != 1 || !bytes.Equal(res.plan.ch.CPU.Miner, []byte(m.ID())) {
		t.Fatalf("plan without an announce: %d chains for %x", res.plan.ch.CPU.Chains, res.plan.ch.CPU.Miner)
	}
}

// TestHostRoundBadProofs: each cheat is a proven fault with its reason, or
// missed when nothing was committed.
func TestHostRoundBadProofs(t *testing.T) {
	honest := func(p *cpuwork.Params) ([][]byte, error) { return cpuwork.Prove(p, 1) }
	cases := []struct {
		name   string
		prove  func(*cpuwork.Params) ([][]byte, error)
		missed bool
		reason string
	}{
		{"wrong checkpoint", func(p *cpuwork.Params) ([][]byte, error) {
			st, err := honest(p)
			for i := range st {
				st[i][0] ^= 1 // every checkpoint: whichever is sampled is wrong
			}
			return st, err
		}, false, cpuwork.ErrSegment.Error()},
		{"another identity", func(p *cpuwork.Params) ([][]byte, error) {
			q := *p
			q.Miner = []byte("someone else")
			return honest(&q)
		}, false, cpuwork.ErrSegment.Error()},
		{"short state", func(p *cpuwork.Params) ([][]byte, error) {
			st, err := honest(p)
			for i := range st {
				st[i] = st[i][:cpuwork.StateBytes-8]
			}
			return st, err
		}, false, "states of 128"},
		{"no root", func(*cpuwork.Params) ([][]byte, error) { return nil, errors.New("refuse") }, true, "stream closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, m := hostPair(t, c.prove)
			res, err := v.validator.runHost(t.Context(), m.ID(), nil, 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			o := res.out
			if o.Verified || o.Missed != c.missed || !strings.Contains(o.Reason, c.reason) || o.Credit != 0 {
				t.Fatalf("verified %v missed %v credit %v reason %q; want missed %v, reason with %q",
					o.Verified, o.Missed, o.Credit, o.Reason, c.missed, c.reason)
			}
		})
	}
}

func TestHostChallengeDecode(t *testing.T) {
	p, err := planHost(1<<10, "miner-id", nil, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	b := p.ch.encode()
	got, err := decodeHostChallenge(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.encode(), b) {
		t.Fatalf("round trip differs")
	}
	mut := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	bad := map[string][]byte{
		"empty":        nil,
		"truncated":    b[:len(b)-1],
		"trailing":     append(append([]byte(nil), b...), 0),
		"kind":         mut(func(x []byte) []byte { x[0] = 9; return x }),
		"no samples":   mut(func(x []byte) []byte { x[33], x[34] = 0, 0; return x }),
		"too many":     mut(func(x []byte) []byte { x[33], x[34] = 0xff, 0xff; return x }),
		"no deadline":  mut(func(x []byte) []byte { copy(x[35:39], []byte{0, 0, 0, 0}); return x }),
		"table":        mut(func(x []byte) []byte { x[72+len("miner-id")] = cpuwork.MaxTableLog + 1; return x }),
		"zero chains":  mut(func(x []byte) []byte { copy(x[len(x)-24:], make([]byte, 8)); return x }),
		"oversized":    make([]byte, maxHostChallenge+1),
		"miner length": mut(func(x []byte) []byte { x[71] = 200; return x }),
	}
	for name, b := range bad {
		if _, err := decodeHostChallenge(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
