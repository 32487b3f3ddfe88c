package node

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/plan"

	"github.com/libp2p/go-libp2p/core/event"
	p2phost "github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// simHostPair starts, on a simulated network in the caller's synctest
// bubble, a validator that plays no rounds of its own and a miner, CPU host
// rounds run to window. The miner proves with prove if set, else on the
// simulated host (simHostWindow): either way its chains run in virtual
// time, so the round's tight deadline measures nothing of this machine.
func simHostPair(t *testing.T, window time.Duration, prove func(*cpuwork.Params, time.Time) (uint64, [][]byte, error)) (*Node, *Node) {
	return hostPairOn(newSimTestNet(t), func(c *config.Config) { c.Validator.HostCPUWindow = config.Duration{Duration: window} },
		func(o *Options) {
			if prove != nil {
				o.Adversary.Miner.HostProve, o.Adversary.Miner.HostWindow = prove, nil
			}
		})
}

// simProve is simHostWindow's proof: the states of the segments the
// simulated host runs before stop, returned when it would have run them.
func simProve(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
	n, done := simHostWindow(p, stop)
	q, err := p.Proven(n)
	if err != nil {
		return 0, nil, err
	}
	states, err := cpuwork.Prove(q, 1)
	time.Sleep(time.Until(done)) // the chains' run, in virtual time
	return n, states, err
}

// hostPairWith starts, on loopback, a validator that plays no rounds of
// its own and a miner, connected, with the configuration and the miner's
// options edited.
func hostPairWith(t *testing.T, edit func(*config.Config), miner func(*Options)) (*Node, *Node) {
	return hostPairOn(newTestNet(t), edit, miner)
}

// hostPairOn is hostPairWith on tn.
func hostPairOn(tn *testNet, edit func(*config.Config), miner func(*Options)) (*Node, *Node) {
	t := tn.t
	cfg := testConfig()
	cfg.Validator.RoundOffset = config.Duration{Duration: time.Hour} // runHost is called directly
	edit(&cfg)
	v := tn.start(RoleValidator, cfg, nil)
	m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, miner)
	tn.connect(m, v)
	// runHost is called directly: the miner's Run must have registered its
	// host stream first.
	waitProtocol(t, m.Host(), hostround.Protocol)
	return v, m
}

// waitProtocol blocks until h serves p, which a role registers when Run
// starts it.
func waitProtocol(t *testing.T, h p2phost.Host, p libp2pprotocol.ID) {
	t.Helper()
	sub, err := h.EventBus().Subscribe(new(event.EvtLocalProtocolsUpdated))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if slices.Contains(h.Mux().Protocols(), p) {
		return
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-sub.Out():
			if slices.Contains(e.(event.EvtLocalProtocolsUpdated).Added, p) {
				return
			}
		case <-timeout:
			t.Fatalf("%s never served", p)
		}
	}
}

func TestHostRoundVerified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { hostRoundVerified(t) })
}

func hostRoundVerified(t *testing.T) {
	v, m := simHostPair(t, 50*time.Millisecond, nil)
	res, err := v.validator.RunHost(t.Context(), hostround.KindCPU, m.ID(), nil, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Out
	if !o.Verified || o.Missed || o.Reason != "" {
		t.Fatalf("honest host round: verified %v missed %v reason %q", o.Verified, o.Missed, o.Reason)
	}
	if len(o.Segments) != plan.HostSamples || !(o.StepNs > 0) || !(o.Credit > 0 && o.Credit <= 1) {
		t.Fatalf("outcome %d segments, %.1f ns/step, credit %v", len(o.Segments), o.StepNs, o.Credit)
	}
	if p := res.Plan.Challenge.Proof.(hostround.CPUProof); p.Chains != 1 || !bytes.Equal(p.Miner, []byte(m.ID())) {
		t.Fatalf("plan without an announce: %d chains for %x", p.Chains, p.Miner)
	}
}

// TestHostRoundBadProofs: each cheat is a proven fault with its reason, or
// missed when nothing was committed.
func TestHostRoundBadProofs(t *testing.T) {
	type prover = func(*cpuwork.Params, time.Time) (uint64, [][]byte, error)
	honest := simProve
	cases := []struct {
		name   string
		prove  prover
		missed bool
		reason string
	}{
		{"wrong checkpoint", func(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
			n, st, err := honest(p, stop)
			for i := range st {
				st[i][0] ^= 1 // every checkpoint: whichever is sampled is wrong
			}
			return n, st, err
		}, false, cpuwork.ErrSegment.Error()},
		{"another identity", func(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
			q := *p
			q.Miner = []byte("someone else")
			return honest(&q, stop)
		}, false, cpuwork.ErrSegment.Error()},
		{"short state", func(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
			n, st, err := honest(p, stop)
			for i := range st {
				st[i] = st[i][:cpuwork.StateBytes-8]
			}
			return n, st, err
		}, false, "opening: opening: "}, // the decoder refuses it
		{"steps claimed beyond those run", func(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
			n, st, err := honest(p, stop)
			// Claimed twice the run; the second half's states are
			// invented, so a sample there fails.
			for _, x := range st[:len(st):len(st)] {
				st = append(st, append([]byte{^x[0]}, x[1:]...))
			}
			return 2 * n, st, err
		}, false, cpuwork.ErrSegment.Error()},
		{"no root", func(*cpuwork.Params, time.Time) (uint64, [][]byte, error) { return 0, nil, errors.New("refuse") }, true, "stream closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v, m := simHostPair(t, 20*time.Millisecond, c.prove)
				res, err := v.validator.RunHost(t.Context(), hostround.KindCPU, m.ID(), nil, 0, 1, 0)
				if err != nil {
					t.Fatal(err)
				}
				o := res.Out
				if o.Verified || o.Missed != c.missed || !strings.Contains(o.Reason, c.reason) || o.Credit != 0 {
					t.Fatalf("verified %v missed %v credit %v reason %q; want missed %v, reason with %q",
						o.Verified, o.Missed, o.Credit, o.Reason, c.missed, c.reason)
				}
			})
		})
	}
}

// cpuHostConfig is testConfig with CPU host rounds run to window, at most
// chains chains.
func cpuHostConfig(window time.Duration, chains int) config.Config {
	c := testConfig()
	c.Validator.HostCPUWindow, c.Validator.HostCPUMaxChains = config.Duration{Duration: window}, chains
	return c
}

func TestHostChallengeDecode(t *testing.T) {
	p, err := plan.Host(cpuHostConfig(20*time.Millisecond, config.MaxHostChains), hostround.KindCPU, "miner-id", nil, memwalk.Epoch{}, time.Millisecond, 0, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	capped, err := plan.Host(cpuHostConfig(20*time.Millisecond, 3), hostround.KindCPU, "miner-id", &pb.MinerAnnounce{Hardware: &pb.Hardware{CpuCores: 8}}, memwalk.Epoch{}, 0, 0, rand.Reader)
	if err != nil || capped.Challenge.Proof.Dims().Chains != 3 {
		t.Fatalf("8 announced cores under a cap of 3: %v chains, %v", capped.Challenge.Proof.Dims().Chains, err)
	}
	b := p.Challenge.Encode()
	got, err := hostround.DecodeChallenge(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Encode(), b) {
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
		"oversized":    make([]byte, hostround.MaxChallenge+1),
		"miner length": mut(func(x []byte) []byte { x[71] = 200; return x }),
	}
	for name, b := range bad {
		if _, err := hostround.DecodeChallenge(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// localHostRecord is a verified CPU host record proved here, the steps
// expected in its window proven, its root arriving stepNs per chain step
// after the challenge (no round trip).
func localHostRecord(t *testing.T, v, m peer.ID, e, r uint64, stepNs float64) *store.HostRecord {
	t.Helper()
	pl, err := plan.Host(cpuHostConfig(20*time.Millisecond, config.MaxHostChains), hostround.KindCPU, m, nil, memwalk.Epoch{}, 0, 0, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := pl.Challenge.Proof.(hostround.CPUProof)
	q, err := c.Proven(c.Steps / 16 / c.Segment * c.Segment) // the cap is 16 times the steps expected
	if err != nil {
		t.Fatal(err)
	}
	pl.Challenge.Proof = q
	p := q.Params
	states, err := cpuwork.Prove(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	root, leaves, err := host.Commit(cpuwork.Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	op, err := host.Open(p.Shape, states, leaves, host.Sample(pl.Secret, root, p.Encode(), p.Shape, int(pl.Challenge.Samples)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return &store.HostRecord{Epoch: e, Round: r, Miner: []byte(m), Validator: []byte(v), Challenge: pl.Challenge.Encode(),
		Secret: pl.Secret, RootNanos: int64(stepNs * float64(p.Steps)), Root: root, Opening: b, Verdict: store.VerdictVerified}
}

func TestAuditHostRecord(t *testing.T) {
	_, v := nodetest.SeededKey(t, 1)
	_, m := nodetest.SeededKey(t, 2)
	if err := audit.Host(localHostRecord(t, v, m, 1, 1, 30)); err != nil {
		t.Fatalf("honest record: %v", err)
	}
	cases := map[string]func(*store.HostRecord){
		"opening altered":    func(r *store.HostRecord) { r.Opening[4] ^= 1 },
		"root altered":       func(r *store.HostRecord) { r.Root[0] ^= 1 },
		"secret altered":     func(r *store.HostRecord) { r.Secret[0] ^= 1 },
		"root late":          func(r *store.HostRecord) { r.RootNanos = 1 << 40 },
		"failed yet sound":   func(r *store.HostRecord) { r.Verdict, r.Reason = store.VerdictFailed, "said so" },
		"another miner":      func(r *store.HostRecord) { r.Miner = []byte(v) },
		"challenge mangled":  func(r *store.HostRecord) { r.Challenge = r.Challenge[:10] },
		"verified, unopened": func(r *store.HostRecord) { r.Opening = nil },
	}
	for name, f := range cases {
		r := localHostRecord(t, v, m, 1, 1, 30)
		f(r)
		if err := audit.Host(r); err == nil {
			t.Errorf("%s: audits clean", name)
		}
	}
}

// TestEpochScoreProvenCPU: the CPU part comes from the validator's own
// verified host records only, faster chains scoring more, and the epoch's
// rounds_root commits to them.
func TestEpochScoreProvenCPU(t *testing.T) {
	vk, v := nodetest.SeededKey(t, 1)
	_, m := nodetest.SeededKey(t, 2)
	_, other := nodetest.SeededKey(t, 3)
	score := func(hosts ...*store.HostRecord) (float64, []byte) {
		st, err := store.Open("db", store.Options{FS: memFS()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rng := nodetest.SplitMix64(1)
		rec := nodetest.GoldenRound(t, &rng, vk, v, m, 5, 1)
		rec.Verdict, rec.Reason, rec.TFLOPS = store.VerdictVerified, "", 100
		if err := st.PutRound(rec); err != nil {
			t.Fatal(err)
		}
		for _, h := range hosts {
			if err := st.PutHost(h); err != nil {
				t.Fatal(err)
			}
		}
		s := &epoch.Scorer{Store: st, Validator: v, Config: scoring.DefaultConfig()}
		er, scores, err := s.Close(5)
		if err != nil || len(scores) != 1 {
			t.Fatalf("close: %v, %d scores", err, len(scores))
		}
		return scores[0].CPU, er.RoundsRoot
	}
	none, rootNone := score()
	fast, rootFast := score(localHostRecord(t, v, m, 5, 2, 30))
	slow, _ := score(localHostRecord(t, v, m, 5, 2, 400))
	foreign, rootForeign := score(localHostRecord(t, other, m, 5, 2, 30))
	if none != 0 || foreign != 0 {
		t.Fatalf("CPU part %v without host records, %v from another validator's: want 0", none, foreign)
	}
	if !(fast > slow && slow > 0) {
		t.Fatalf("CPU part fast %v, slow %v: want fast > slow > 0", fast, slow)
	}
	if bytes.Equal(rootNone, rootFast) || !bytes.Equal(rootNone, rootForeign) {
		t.Fatal("rounds_root must commit to this validator's host records and only to them")
	}
}

// TestHostRoundsScheduledAndStored: with host rounds on, a validator plays
// one with each miner in an epoch after a GPU round, stores it, and it
// audits clean and measures the announced cores.
func TestHostRoundsScheduledAndStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { hostRoundsScheduledAndStored(t) })
}

func hostRoundsScheduledAndStored(t *testing.T) {
	tn := newSimTestNet(t)
	cfg := testConfig()
	cfg.Validator.HostCPUWindow = config.Duration{Duration: 20 * time.Millisecond}
	hosts := make(chan *store.HostRecord, 16)
	v, st := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.OnHost = func(r *store.HostRecord) { hosts <- r } })
	m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Hardware = &pb.Hardware{CpuCores: 2} })
	tn.connect(m, v)
	var r *store.HostRecord
	select {
	case r = <-hosts:
	case <-time.After(60 * time.Second):
		t.Fatal("no host round within 60 s")
	}
	if r.Verdict != store.VerdictVerified || peer.ID(r.Miner) != m.ID() {
		t.Fatalf("host record %v for %s: %s", r.Verdict, peer.ID(r.Miner), r.Reason)
	}
	if err := audit.Host(r); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for s, err := range st.HostRounds(r.Epoch, r.Epoch) {
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(record.EncodeHost(s), record.EncodeHost(r)) {
			stored++
		}
	}
	gpu := 0
	for rr, err := range st.Rounds(r.Epoch, r.Epoch) {
		if err != nil {
			t.Fatal(err)
		}
		if rr.Round < r.Round {
			gpu++
		}
	}
	if hw := epoch.ProvenHost([]*store.HostRecord{r}); stored != 1 || gpu == 0 || hw.CPUCores != 2 || !(hw.CPUGHz > 0) {
		t.Fatalf("stored %d, %d GPU rounds before it, proven %d cores at %v GHz", stored, gpu, hw.CPUCores, hw.CPUGHz)
	}
}

// TestHostElapsedCapsRTT: a round trip inflated past the root's arrival
// (delayed pings) takes off at most 5 % of it.
func TestHostElapsedCapsRTT(t *testing.T) {
	for _, c := range []struct{ root, rtt, want int64 }{
		{1e6, 1e4, 1e6 - 1e4},   // a real round trip: subtracted
		{1e6, 9e5, 95e4},        // inflated: 5 % at most
		{1e6, 5e9, 95e4},        // past the arrival
		{1, 1, 1},               // never below 1 ns
		{2e6, 0, 2e6},           // no ping
		{2e6, 1e5, 2e6 - 1e5},   // exactly 5 %
		{2e6, 1e5 + 1, 19e5},    // just over
		{1e9, 49e6, 1e9 - 49e6}, // under
	} {
		if got := epoch.HostElapsed(&store.HostRecord{RootNanos: c.root, RTTNanos: c.rtt}); got.Nanoseconds() != c.want {
			t.Errorf("root %d rtt %d: elapsed %d, want %d", c.root, c.rtt, got.Nanoseconds(), c.want)
		}
	}
}
