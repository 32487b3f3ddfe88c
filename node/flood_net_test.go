package node

import (
	"encoding/binary"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/internal/nodetest"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// SPEC §15, end to end: a listed validator with stake 0.01, running
// software that skips pog's gossip checks on its own messages, gossips
// 1,000 signed challenges a second for 20 s to one miner, through an
// honest validator that relays the challenge topic and to the miner,
// which does not. Every round that two honest validators play with that
// miner meanwhile verifies, and the flooder's gossip score at the relaying
// validator falls below the gossip threshold.
func TestChallengeFloodEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perSecond, seconds = 1000, 20
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		fkey, fid := nodetest.Key(t)
		keys := make([]crypto.PrivKey, 2)
		stakes := map[string]float64{fid.String(): 0.01}
		for i := range keys {
			var id peer.ID
			keys[i], id = nodetest.Key(t)
			stakes[id.String()] = 1
		}
		start := func(role Role, key crypto.PrivKey) *Node {
			n, _ := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
				o.Stakes = stakes
				if key != nil {
					o.Key = key
				}
			})
			return n
		}
		honest := []*Node{start(RoleValidator, keys[0]), start(RoleValidator, keys[1])}
		miner := start(RoleMiner, nil)
		for _, v := range honest {
			tn.connect(miner, v)
		}
		tn.waitVerified(honest, []*Node{miner}, 1, 60*time.Second)

		// The flooder: a bare host and gossipsub with no pog validators.
		fcfg := cfg.Node
		var transport []libp2p.Option
		fcfg.Listen = make([]string, 1)
		fcfg.Listen[0], transport = tn.simEndpoint()
		h, err := newHost(fkey, fcfg, transport...)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		ps, err := newPubSub(tn.ctx, h, nil, func(peer.ID) float64 { return 0 })
		if err != nil {
			t.Fatal(err)
		}
		topic, err := ps.Join(protocol.TopicChallenge)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []*Node{honest[0], miner} {
			if err := h.Connect(tn.ctx, peer.AddrInfo{ID: n.ID(), Addrs: n.host.Addrs()}); err != nil {
				t.Fatal(err)
			}
		}
		challenge := func(round uint64) []byte {
			p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner.ID())}
			binary.LittleEndian.PutUint64(p.Nonce[:], round)
			b, _ := p.MarshalBinary()
			raw, err := protocol.Seal(fkey, &pb.Challenge{Version: protocol.Version, Epoch: miner.view.epochAt(time.Now()), Round: round,
				Miner: []byte(miner.ID()), Params: [][]byte{b}, SecretCommitment: make([]byte, 32), Samples: 4,
				DeadlineMs: 1000, Steps: 1, FirstRootMs: 500})
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}

		// Flood in 10 ms batches, counting the honest rounds meanwhile.
		verified := map[string]int{}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		end := time.Now().Add(seconds * time.Second)
		for round := uint64(1); time.Now().Before(end); {
			select {
			case <-tick.C:
				for i := 0; i < perSecond/100; i++ {
					if err := topic.Publish(tn.ctx, challenge(round)); err != nil {
						t.Fatal(err)
					}
					round++
				}
			case r := <-tn.records:
				if peer.ID(r.Miner) != miner.ID() {
					continue
				}
				if r.Verdict != store.VerdictVerified {
					t.Fatalf("an honest round failed during the flood: %q", r.Reason)
				}
				verified[peer.ID(r.Validator).String()]++
			}
		}
		relay := honest[0]
		t.Logf("during the flood: %d challenges sent; rounds verified per honest validator %v; the flooder's score at the relaying validator %.0f",
			perSecond*seconds, verified, relay.PeerScore(fid))
		for _, v := range honest {
			if verified[v.ID().String()] < 2 {
				t.Errorf("validator %s verified %d rounds during the flood", v.ID(), verified[v.ID().String()])
			}
		}
		if s := relay.PeerScore(fid); s >= GossipThreshold {
			t.Errorf("the flooder's score at the relaying validator is %v, want below the gossip threshold %d", s, GossipThreshold)
		}
		if s := relay.PeerScore(honest[1].ID()); s < 0 {
			t.Errorf("the other honest validator scored %v at the relaying one", s)
		}
	})
}
