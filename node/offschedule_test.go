package node

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/node/recordsync"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// Gossip Rejects a challenge from a listed validator without stake, Ignores
// one from a staked validator outside its slots' opening windows, accepts
// the owner's in its window, and counts each refusal against its signer.
func TestOffScheduleGossipRule(t *testing.T) {
	a, b, zero, miner := nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t)
	cfg := config.DefaultConfig() // slots of 12.5 s: longer than the opening lag
	cfg.Network.TrustAnyValidator = false
	cfg.Validator.RoundTargetCPU = cfg.Validator.RoundTarget // either kind's slots, the same
	v := newView(time.Minute, false, []peer.ID{a, b, zero})
	v.slots = newSlotRule(map[string]float64{a.String(): 1, b.String(): 1, zero.String(): 0}, cfg)
	s := v.slots.s
	s.Slot = v.slots.gpu
	start := time.Unix(1_800_000_000, 0)
	j := s.SlotAt(start)
	for s.Owner([]byte(miner), j) != s.Index([]byte(a)) || s.Owner([]byte(miner), j-1) == s.Index([]byte(a)) {
		j++ // a slot of a's after one of b's
	}
	slot := round.Schedule{Slot: s.Slot}
	for _, c := range []struct {
		who  peer.ID
		at   time.Time
		want pubsub.ValidationResult
	}{
		{a, slot.Start(j), pubsub.ValidationAccept},
		{a, slot.Start(j).Add(-round.OpeningSkew - time.Millisecond), pubsub.ValidationIgnore},
		{b, slot.Start(j).Add(s.Slot / 16), pubsub.ValidationIgnore},
		{zero, slot.Start(j), pubsub.ValidationReject},
	} {
		if d, _ := v.onSchedule(c.who, miner, c.at); d.result != c.want {
			t.Errorf("%s at %v: %v (%s), want %v", c.who, c.at, d.result, d.reason, c.want)
		}
	}
	if v.offSchedule[zero] != 1 || v.offSchedule[a] != 1 || v.offSchedule[b] != 1 {
		t.Errorf("off-schedule counts %v: want one refusal each", v.offSchedule)
	}
	if newSlotRule(nil, cfg) != nil {
		t.Error("a network without a validator set has no slot rule")
	}
}

// A listed validator without stake that challenges a miner off schedule,
// holding a host round open and a GPU round in play, gets neither served:
// the miner refuses them before its host lock and queue and counts them
// against it, and gossip does not carry its challenges (its own node's
// check refuses to publish them); the honest owner's rounds verify
// meanwhile.
func TestSquatterRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		cfg.Validator.HostCPUWindow = config.Duration{Duration: 50 * time.Millisecond} // the squatter's host rounds
		hk, hid := nodetest.Key(t)
		sk, sid := nodetest.Key(t)
		stakes := map[string]float64{hid.String(): 1, sid.String(): 0}
		start := func(role Role, key crypto.PrivKey, squat func() []peer.ID) *Node {
			n, _ := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
				o.Stakes, o.Adversary.Squat = stakes, squat
				if key != nil {
					o.Key = key
				}
			})
			return n
		}
		honest := start(RoleValidator, hk, nil)
		miner := start(RoleMiner, nil, nil)
		squatter := start(RoleValidator, sk, func() []peer.ID { return []peer.ID{miner.ID()} })
		tn.connect(miner, honest)
		tn.connect(miner, squatter)
		tn.connect(honest, squatter)
		tn.waitVerified([]*Node{honest}, []*Node{miner}, 4, time.Minute)
		if miner.OffSchedule()[sid] == 0 || squatter.OffSchedule()[sid] == 0 {
			t.Errorf("off-schedule counts against the squatter: %d at the miner, %d published",
				miner.OffSchedule()[sid], squatter.OffSchedule()[sid])
		}
		_, hosts := miner.miner.Played()
		refused := 0
		for _, h := range hosts {
			switch {
			case h.Validator != sid:
			case h.Error != "refused: off schedule":
				t.Errorf("the squatter's host round was not refused off schedule: %+v", h)
			default:
				refused++
			}
		}
		if refused == 0 {
			t.Error("the squatter opened no host round")
		}
		if miner.OffSchedule()[hid] != 0 {
			t.Errorf("the honest owner was refused %d times", miner.OffSchedule()[hid])
		}
		// The squatter's challenges are kept, signed, against it alone,
		// and cost it peer score at the miner.
		kept := 0
		for o, err := range miner.store.OffSchedules(0, math.MaxUint64) {
			if err != nil {
				t.Fatal(err)
			}
			op, err := protocol.Open(o.Envelope, pb.MessageType_CHALLENGE)
			if err != nil || op.Author != sid || peer.ID(o.Signer) != sid {
				t.Errorf("kept an off-schedule challenge that is not the squatter's: %v", err)
			}
			kept++
		}
		if kept == 0 {
			t.Fatal("no off-schedule challenge kept against the squatter")
		}
		// Anyone can fetch them from the miner (SPEC §22.1, kind 5) and
		// check them: the honest validator here.
		e := miner.view.epochAt(time.Now())
		fetched := 0
		for ep := e - 1; ep <= e; ep++ {
			got, err := recordsync.FetchOffSchedule(t.Context(), honest.host, miner.ID(), ep)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range got {
				if peer.ID(o.Signer) != sid {
					t.Errorf("fetched an off-schedule challenge of %s", peer.ID(o.Signer))
				}
			}
			fetched += len(got)
		}
		if fetched != kept {
			t.Errorf("fetched %d off-schedule challenges from the miner, it kept %d", fetched, kept)
		}
		if s, h := miner.view.appScore(sid, time.Now()), miner.view.appScore(hid, time.Now()); s >= 0 || h != 0 {
			t.Errorf("application scores at the miner: squatter %v (want < 0), honest owner %v (want 0)", s, h)
		}
	})
}

// A slot's owner that opens GPU rounds and never sends a beacon, and host
// rounds whose secret it never reveals (the squatter's rounds, here from
// the only staked validator, so each is on schedule), holds the miner's
// queue place for at most its wait budget, proof_timeout, not until the
// challenge's hour-long deadline, and its host lock for at most
// hostround.RevealWait after the root, not for ever: the miner ends each such
// round and plays the next.
func TestOwnerCannotStallARound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		cfg.Validator.HostCPUWindow = config.Duration{Duration: 50 * time.Millisecond} // the squatter's host rounds
		sk, sid := nodetest.Key(t)
		var victim atomic.Pointer[peer.ID] // set once the miner exists; read by the squatter's loop
		squatter, _ := tn.startWith(RoleValidator, cfg, cpu.Backend{}, func(o *Options) {
			o.Key, o.Stakes = sk, map[string]float64{sid.String(): 1}
			o.Adversary.Squat = func() []peer.ID {
				if p := victim.Load(); p != nil {
					return []peer.ID{*p}
				}
				return nil
			}
		})
		miner, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes = map[string]float64{sid.String(): 1} })
		id := miner.ID()
		victim.Store(&id)
		tn.connect(miner, squatter)
		const span = time.Minute
		time.Sleep(span)
		rounds, hosts := miner.miner.Played()
		stalled, unrevealed := 0, 0
		for _, r := range rounds {
			if r.Validator == sid && strings.HasPrefix(r.Reason, "beacons kept the miner waiting") {
				stalled++
			}
		}
		for _, h := range hosts {
			if h.Validator == sid && strings.HasPrefix(h.Error, "sampling secret") {
				unrevealed++
			}
		}
		// Each round ends a budget after its last root; a minute holds
		// several.
		budget := cfg.Validator.ProofTimeout.Duration
		if stalled < int(span/(2*budget)) || unrevealed < int(span/(2*hostround.RevealWait)) {
			t.Errorf("in %v: %d rounds abandoned for withheld beacons (budget %v), %d host rounds ended for a withheld secret (budget %v)",
				span, stalled, budget, unrevealed, hostround.RevealWait)
		}
		t.Logf("in %v, budget %v: %d of %d rounds abandoned for withheld beacons, %d of %d host rounds ended for a withheld secret",
			span, budget, stalled, len(rounds), unrevealed, len(hosts))
	})
}

// rogueOwner is a network of an honest validator, a miner and a rogue
// owner: a listed, staked peer that plays no rounds of its own, only the
// one a test sends in a slot it owns.
type rogueOwner struct {
	cfg                  config.Config
	honest, miner, rogue *Node
	hid, rid             peer.ID
	rk                   crypto.PrivKey
}

func newRogueOwner(t *testing.T, be kernels.Backend) *rogueOwner {
	tn := newSimTestNet(t)
	r := &rogueOwner{cfg: testConfig()}
	r.cfg.Network.TrustAnyValidator = false
	var hk crypto.PrivKey
	hk, r.hid = nodetest.Key(t)
	r.rk, r.rid = nodetest.Key(t)
	stakes := map[string]float64{r.hid.String(): 1, r.rid.String(): 1}
	r.honest, _ = tn.startWith(RoleValidator, r.cfg, cpu.Backend{}, func(o *Options) { o.Key, o.Stakes = hk, stakes })
	r.miner, _ = tn.startWith(RoleMiner, r.cfg, be, func(o *Options) { o.Stakes = stakes })
	r.rogue, _ = tn.startWith(RoleMiner, r.cfg, cpu.Backend{}, func(o *Options) { o.Key, o.Stakes = r.rk, stakes })
	tn.connect(r.miner, r.honest)
	tn.connect(r.miner, r.rogue)
	tn.waitVerified([]*Node{r.honest}, []*Node{r.miner}, 1, time.Minute)
	return r
}

// send sends the miner, at the opening of the rogue's next slot, the probe
// a plan gives it, after edit, and returns how long the miner held it.
func (r *rogueOwner) send(t *testing.T, edit func(*pb.Challenge, []proof.Params)) time.Duration {
	t.Helper()
	m := r.miner
	ann := &pb.MinerAnnounce{Precisions: []uint32{uint32(proof.FP16)}, MaxOutputBytes: r.cfg.Miner.MaxOutputBytes, Gpus: m.miner.GPUs}
	pl, err := plan.Challenge(r.cfg.Validator, m.ID(), ann, 0, proof.FP16, 0, 0, 0, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sc := sample.Commit(pl.Secret)
	msg := &pb.Challenge{Version: protocol.Version, Epoch: r.rogue.view.epochAt(time.Now()), Round: 1, Miner: []byte(m.ID()),
		SecretCommitment: sc[:], Samples: uint32(pl.Samples), Steps: uint32(pl.Steps),
		DeadlineMs: uint32(pl.Deadline.Milliseconds()), FirstRootMs: uint32(pl.FirstRootBy.Milliseconds()), Probe: true}
	edit(msg, pl.Params)
	for _, p := range pl.Params {
		b, _ := p.MarshalBinary()
		msg.Params = append(msg.Params, b)
	}
	raw, err := protocol.Seal(r.rk, msg)
	if err != nil {
		t.Fatal(err)
	}
	for !m.view.slots.Opens(m.ID(), r.rid, len(m.miner.GPUs) > 0, time.Now()) {
		time.Sleep(10 * time.Millisecond)
	}
	s, err := r.rogue.host.NewStream(t.Context(), m.ID(), protocol.RoundProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Reset()
	at := time.Now()
	if err := protocol.WriteRoundFrame(bufio.NewWriter(s), &pb.RoundFrame{Msg: &pb.RoundFrame_Challenge{Challenge: raw}}); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, s) // until the miner ends the stream; no beacon is sent
	return time.Since(at)
}

// rogueRound is the miner's record of the rogue's round, and whether the
// honest owner's rounds verified after it.
func (r *rogueOwner) rogueRound(t *testing.T) (miner.PlayedRound, bool) {
	t.Helper()
	rounds, _ := r.miner.miner.Played()
	i := slices.IndexFunc(rounds, func(p miner.PlayedRound) bool { return p.Validator == r.rid })
	if i < 0 {
		t.Fatalf("the miner kept no record of the rogue's round: %+v", rounds)
	}
	for until := r.honestSlotsEnd(2); time.Now().Before(until); {
		time.Sleep(r.cfg.Validator.RoundTarget.Duration / 4)
		after, _ := r.miner.miner.Played()
		if slices.ContainsFunc(after[len(rounds):], func(p miner.PlayedRound) bool {
			return p.Validator == r.hid && p.Verdict == "verified"
		}) {
			return rounds[i], true
		}
	}
	return rounds[i], false
}

// honestSlotsEnd is when the honest owner's n-th slot at the miner after
// now ends, with time to verify its round: keys are random, so the
// schedule, not a fixed wait, says when its next round is due. The owner
// leaves idle the share of slots its duty cycle does not take.
func (r *rogueOwner) honestSlotsEnd(n int) time.Time {
	s := r.miner.view.slots.s
	s.Coverage = r.cfg.Validator.DutyCycle
	if s.Slot = r.miner.view.slots.cpu; len(r.miner.miner.GPUs) > 0 {
		s.Slot = r.miner.view.slots.gpu
	}
	j := s.SlotAt(time.Now()) + 1
	for range n {
		j, _ = s.Next([]byte(r.miner.ID()), s.Index([]byte(r.hid)), j, 1<<20)
		j++
	}
	return s.Start(j).Add(r.cfg.Validator.ProofTimeout.Duration)
}

// An owner whose round is later than any plan could give the miner (here
// a probe due in an hour, the protocol's limit) is refused at once, before
// any work, and the refusal is kept among the miner's rounds; the next
// owner's rounds verify as before. Before the miner checked a round
// against the plan it took such a round on, and held it until the beacon
// budget ran out (or, its beacons sent, until its work was done).
func TestOwnerOversizedRoundRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRogueOwner(t, cpu.Backend{})
		held := r.send(t, func(c *pb.Challenge, _ []proof.Params) {
			c.DeadlineMs, c.FirstRootMs = protocol.MaxDeadlineMS, protocol.MaxDeadlineMS
		})
		if held > time.Second {
			t.Errorf("the miner held the oversized round %v", held)
		}
		p, next := r.rogueRound(t)
		if p.Verdict != "refused" || !strings.Contains(p.Reason, "deadline") {
			t.Errorf("the oversized round was not refused for its deadline: %+v", p)
		}
		if !next {
			t.Error("no round of the honest owner verified after the refusal")
		}
		t.Logf("held %v, refused: %s", held, p.Reason)
	})
}

// stuckNonce marks the jobs stuckBackend never finishes.
var stuckNonce = [32]byte{0: 0xee, 31: 0xee}

// stuckBackend is a backend whose jobs of nonce stuckNonce stand for more
// work than their deadline allows: they end only when their context does,
// and stopped counts them.
type stuckBackend struct {
	kernels.Backend
	stopped *atomic.Int32
}

func (b stuckBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	if err != nil || p.Nonce != stuckNonce {
		return j, err
	}
	return stuckJob{j, b.stopped}, nil
}

type stuckJob struct {
	kernels.Job
	stopped *atomic.Int32
}

func (j stuckJob) Multiply(ctx context.Context) error {
	<-ctx.Done()
	j.stopped.Add(1)
	return ctx.Err()
}

// A round whose work outlasts its deadline (within what a plan gives) is
// abandoned at the deadline and its work stopped there, so an owner holds
// the device no longer than its plan's deadline; the next owner's rounds
// verify. Before, the miner waited on the round's stream past the deadline
// and its step went on computing after the round had ended.
func TestOwnerRoundWorkStopsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stopped atomic.Int32
		r := newRogueOwner(t, stuckBackend{cpu.Backend{}, &stopped})
		deadline := r.cfg.Validator.Deadline.Duration
		held := r.send(t, func(_ *pb.Challenge, ps []proof.Params) { ps[0].Nonce = stuckNonce })
		synctest.Wait()
		if held < deadline || held > deadline+time.Second || stopped.Load() != 1 {
			t.Errorf("the miner held a round due after %v for %v; its stuck step stopped: %v", deadline, held, stopped.Load() == 1)
		}
		p, next := r.rogueRound(t)
		if p.Verdict != "abandoned" || !strings.Contains(p.Reason, "deadline") {
			t.Errorf("the round was not abandoned at its deadline: %+v", p)
		}
		if !next {
			t.Error("no round of the honest owner verified after the rogue's")
		}
		t.Logf("held %v, step stopped %v: %s", held, stopped.Load() == 1, p.Reason)
	})
}

// A miner serves a host round only from a host slot's owner in the slot's
// opening window: not from the validator that owns the GPU slot around
// it, not from any validator in a GPU slot, and not from the host slot's
// owner past its window.
func TestHostOpensOnlyInHostSlots(t *testing.T) {
	a, b, miner := nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t)
	cfg := config.DefaultConfig()
	r := newSlotRule(map[string]float64{a.String(): 1, b.String(): 1}, cfg)
	s := r.s
	s.Slot = r.gpu
	start := time.Unix(1_800_000_000, 0)
	hostSlots, gpuSlots := 0, 0
	for k := uint64(start.UnixNano() / int64(s.HostSlot)); hostSlots < 20 || gpuSlots < 20; k++ {
		at := s.HostStart(k)
		o := s.HostOwner(k)
		for _, v := range []peer.ID{a, b} {
			i := s.Index([]byte(v))
			want := o == i
			if got := r.HostOpens(v, at.Add(s.HostSlot/16)); got != want {
				t.Fatalf("host round from %d at %v: %v, host slot owner %d", i, at, got, o)
			}
			if r.HostOpens(v, at.Add(s.HostSlot/8+round.OpeningLag+time.Millisecond)) && s.HostOwner(k+1) != i {
				t.Fatalf("host round from %d past the window of the host slot at %v", i, at)
			}
			if want && r.Opens(miner, v, true, at) {
				t.Fatalf("the host slot at %v also opens a GPU round", at)
			}
		}
		if o >= 0 {
			hostSlots++
		} else {
			gpuSlots++
		}
	}
}

// TestOwnedSlots: the slots each validator owned in a span sum, over the
// validators, to the span's slots with an owner; spans add up; the count
// stops at its limit; a validator outside the set owns none.
func TestOwnedSlots(t *testing.T) {
	a, b, c, miner, outsider := nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t)
	cfg := config.DefaultConfig()
	r := newSlotRule(map[string]float64{a.String(): 1, b.String(): 2, c.String(): 1}, cfg)
	s := r.s
	s.Slot = r.gpu
	t0 := time.Unix(1_800_000_000, 0)
	t1, t2 := t0.Add(100*s.Slot+s.Slot/3), t0.Add(250*s.Slot)
	shut := s.Slot/8 + round.OpeningLag
	owned := 0 // slots whose window closed in (t0, t2] with an owner
	for j := s.SlotAt(t0); !s.Start(j).Add(shut).After(t2); j++ {
		if s.Start(j).Add(shut).After(t0) && s.Owner([]byte(miner), j) >= 0 {
			owned++
		}
	}
	sum := 0
	for _, v := range []peer.ID{a, b, c} {
		whole := r.Owned(miner, v, true, t0, t2, 1<<20)
		if parts := r.Owned(miner, v, true, t0, t1, 1<<20) + r.Owned(miner, v, true, t1, t2, 1<<20); parts != whole {
			t.Errorf("validator %d: %d slots over the span, %d over its two parts", s.Index([]byte(v)), whole, parts)
		}
		if whole > 3 && r.Owned(miner, v, true, t0, t2, 3) != 3 {
			t.Errorf("validator %d: the count passed its limit of 3", s.Index([]byte(v)))
		}
		sum += whole
	}
	if sum != owned || owned < 150 {
		t.Errorf("validators own %d slots in all, the span has %d with an owner", sum, owned)
	}
	if n := r.Owned(miner, outsider, true, t0, t2, 1<<20); n != 0 {
		t.Errorf("a validator outside the set owns %d slots", n)
	}
}
