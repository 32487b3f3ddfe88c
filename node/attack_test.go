package node

import (
	"crypto/rand"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pubsubpb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// badChallenge returns a well-formed challenge sealed by key, for epoch.
func badChallenge(t *testing.T, key crypto.PrivKey, miner peer.ID, epoch uint64) []byte {
	t.Helper()
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner)}
	rand.Read(p.Nonce[:])
	pb1, _ := p.MarshalBinary()
	raw, err := protocol.Seal(key, &pb.Challenge{Version: protocol.Version, Epoch: epoch, Round: 1, Miner: []byte(miner),
		Params: [][]byte{pb1}, SecretCommitment: make([]byte, 32), Samples: 4, DeadlineMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestHostileGossip has an attacker publish garbage, oversized, forged,
// wrongly-authored and expired messages to a validator. The validator must
// reject the first four (an expired one is only Ignored: a skewed clock is
// no proof of malice), score the attacker below zero, and keep verifying an
// honest miner.
func TestHostileGossip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		scores := make(chan map[peer.ID]float64, 16)
		key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		st, err := store.Open("db", store.Options{FS: memFS()})
		if err != nil {
			t.Fatal(err)
		}
		tn.closers = append(tn.closers, st.Close)
		o := Options{Config: cfg, Role: RoleValidator, Key: key, Logger: testLogger(t), Store: st,
			OnRecord: func(r *store.RoundRecord) { tn.records <- r },
			OnScores: func(s map[peer.ID]float64) {
				select {
				case scores <- s:
				default:
				}
			}}
		tn.onSim(&o)
		v, err := New(tn.ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		tn.wg.Add(1)
		go func() { defer tn.wg.Done(); v.Run(tn.ctx) }()

		// The attacker is a plain libp2p+gossipsub peer that skips our rules.
		akey, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		listen, transport := tn.simEndpoint()
		ah, err := libp2p.New(append(transport, libp2p.Identity(akey), libp2p.ListenAddrStrings(listen))...)
		if err != nil {
			t.Fatal(err)
		}
		defer ah.Close()
		aps, err := pubsub.NewGossipSub(tn.ctx, ah, pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
			pubsub.WithMessageIdFn(func(m *pubsubpb.Message) string { return protocol.GossipID(m.Data) }))
		if err != nil {
			t.Fatal(err)
		}
		topics := map[string]*pubsub.Topic{}
		for name := range topicType {
			if topics[name], err = aps.Join(name); err != nil {
				t.Fatal(err)
			}
			if _, err := topics[name].Subscribe(); err != nil {
				t.Fatal(err)
			}
		}
		if err := ah.Connect(tn.ctx, peer.AddrInfo{ID: v.ID(), Addrs: v.Host().Addrs()}); err != nil {
			t.Fatal(err)
		}
		// Publish once the attacker is in the validator's mesh: time in mesh
		// makes its score positive.
		waitScore(t, scores, ah.ID(), func(s float64) bool { return s > 0 })

		victim, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		forged := badChallenge(t, akey, v.ID(), v.view.epochAt(time.Now()))
		var env pb.Envelope
		proto.Unmarshal(forged, &env)
		env.Signature[0] ^= 0xff
		forgedRaw, _ := proto.Marshal(&env)
		attacks := []struct {
			topic string
			data  []byte
		}{
			{protocol.TopicChallenge, []byte("garbage \x00\xff\xfe not protobuf")},
			{protocol.TopicAnnounce, make([]byte, protocol.MaxGossipBytes+1024)},
			{protocol.TopicChallenge, forgedRaw},
			{protocol.TopicChallenge, badChallenge(t, victim, v.ID(), v.view.epochAt(time.Now()))}, // signed by a non-validator
			{protocol.TopicChallenge, badChallenge(t, akey, v.ID(), 1)},                            // expired: Ignored
		}
		for _, a := range attacks {
			if err := topics[a.topic].Publish(tn.ctx, a.data); err != nil {
				t.Fatal(err)
			}
		}
		waitScore(t, scores, ah.ID(), func(s float64) bool { return s < 0 })
		if s := v.PeerScore(ah.ID()); s > GossipThreshold {
			t.Errorf("attacker's score %v is above the gossip threshold %d after five invalid messages", s, GossipThreshold)
		}

		// The validator still works: an honest miner gets verified.
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		tn.waitVerified([]*Node{v}, []*Node{m}, 1, 60*time.Second)
	})
}

// waitScore consumes score snapshots until p's score satisfies cond.
func waitScore(t *testing.T, scores <-chan map[peer.ID]float64, p peer.ID, cond func(float64) bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case s := <-scores:
			if v, ok := s[p]; ok && cond(v) {
				return
			}
		case <-deadline:
			t.Fatalf("score of %s never reached the expected range", p)
		}
	}
}
