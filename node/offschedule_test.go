package node

import (
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/recordsync"
	"github.com/pog-network/pog/protocol"
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
		cfg.Validator.HostCPUSteps = 1 << 12 // the squatter's host rounds
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
// queue place and host lock for at most its wait budget, proof_timeout,
// not until the challenge's hour-long deadline or for ever: the miner
// ends each such round and plays the next.
func TestOwnerCannotStallARound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		cfg.Validator.HostCPUSteps = 1 << 12 // the squatter's host rounds
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
		if stalled < int(span/(2*budget)) || unrevealed < int(span/(2*budget)) {
			t.Errorf("in %v (budget %v): %d rounds abandoned for withheld beacons, %d host rounds ended for a withheld secret",
				span, budget, stalled, unrevealed)
		}
		t.Logf("in %v, budget %v: %d of %d rounds abandoned for withheld beacons, %d of %d host rounds ended for a withheld secret",
			span, budget, stalled, len(rounds), unrevealed, len(hosts))
	})
}
