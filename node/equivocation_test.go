package node

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// A validator that publishes two different records per epoch is proven on
// every node, by gossip, and its stake counts for nothing there: every node
// computes the same consensus without it, and audits pass.
func TestEquivocatorProvenOnEveryNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		// No epoch becomes final within the test: finality_test.go covers
		// that.
		cfg.Network.FinalityEpochs = 1000
		type event struct {
			node  int
			epoch uint64
			v     peer.ID
			proof bool
		}
		events := make(chan event, 4096)
		var nodes []*Node
		var stores []*store.Store
		start := func(role Role, equivocate bool) {
			i := len(nodes)
			n, st := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
				o.OnEpochRecord = func(e uint64, v peer.ID) { events <- event{i, e, v, false} }
				o.OnEquivocation = func(e uint64, v peer.ID) { events <- event{i, e, v, true} }
				if equivocate {
					o.Adversary.EquivocateEpochRecord = func(r *pb.EpochRecord) {
						// The same miners with their weights reversed, and
						// another rounds root, so the records always differ.
						for j, k := 0, len(r.Weights)-1; j < k; j, k = j+1, k-1 {
							r.Weights[j].Weight, r.Weights[k].Weight = r.Weights[k].Weight, r.Weights[j].Weight
						}
						r.RoundsRoot = append([]byte{r.RoundsRoot[0] ^ 1}, r.RoundsRoot[1:]...)
					}
				}
			})
			nodes, stores = append(nodes, n), append(stores, st)
		}
		for i := 0; i < 3; i++ {
			start(RoleValidator, i == 2)
		}
		for i := 0; i < 2; i++ {
			start(RoleMiner, false)
		}
		for i := 1; i < len(nodes); i++ {
			for j := 0; j < i && j < 3; j++ {
				tn.connect(nodes[i], nodes[j])
			}
		}
		eq := nodes[2].ID()
		// Epoch e is done when every node holds the honest validators' records
		// and a proof against the equivocator, for e and e−1.
		type key struct {
			node  int
			v     peer.ID
			proof bool
		}
		have := map[uint64]map[key]bool{}
		done := func(e uint64) bool {
			for i := range nodes {
				for _, k := range []key{{i, nodes[0].ID(), false}, {i, nodes[1].ID(), false}, {i, eq, true}} {
					if !have[e][k] {
						return false
					}
				}
			}
			return true
		}
		first := nodes[0].view.epochAt(time.Now()) + 1
		deadline := time.After(90 * time.Second)
		var e uint64
		for e == 0 {
			select {
			case ev := <-events:
				if ev.proof && ev.v != eq {
					t.Fatalf("node %d proved an honest validator equivocated", ev.node)
				}
				if have[ev.epoch] == nil {
					have[ev.epoch] = map[key]bool{}
				}
				have[ev.epoch][key{ev.node, ev.v, ev.proof}] = true
				if ev.epoch >= first+1 && done(ev.epoch) && done(ev.epoch-1) {
					e = ev.epoch
				}
			case <-deadline:
				t.Fatalf("equivocation proofs did not reach every node in time: %d epochs seen", len(have))
			}
		}
		tn.cancel()
		tn.wg.Wait()
		var want [32]byte
		for i, st := range stores {
			res, err := epoch.Consensus(st, e, nil, consensus.DefaultParams())
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
			j := slices.Index(res.Validators, eq.String())
			if j < 0 || res.Active[j] || res.Stake[j] != 0 {
				t.Fatalf("node %d: the equivocator counts (active %v, stake %v)", i, res.Active, res.Stake)
			}
			if i == 0 {
				want = res.Hash()
			} else if res.Hash() != want {
				t.Fatalf("node %d computed another consensus for epoch %d", i, e)
			}
		}
		for i := 0; i < 2; i++ {
			rep, err := audit.Audit(stores[i], audit.Options{Epoch: &e, Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{nodes[i].ID()}})
			if err != nil || len(rep.Problems) > 0 || rep.Equivocations == 0 {
				t.Fatalf("validator %d audit: %v %v (%d proofs)", i, err, rep.Problems, rep.Equivocations)
			}
		}
	})
}

func mustProof(t *testing.T, a, b []byte) *pb.EquivocationProof {
	t.Helper()
	p, err := protocol.NewEquivocationProof(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEquivocationGossipRules walks epoch records and proofs through the
// view and the stored-state check (SPEC.md §15).
func TestEquivocationGossipRules(t *testing.T) {
	val, other, self := newActor(t), newActor(t), newActor(t)
	now := time.Unix(1_800_000_000, 0)
	v := newView(time.Minute, false, []peer.ID{val.id, self.id})
	e := v.epochAt(now) - 1
	st := nodetest.MemStore(t)
	x, _ := nodetest.EpochRecord(t, val.key, e, [32]byte{}, nil)
	y, _ := nodetest.EpochRecord(t, val.key, e, [32]byte{1}, nil)
	z, _ := nodetest.EpochRecord(t, val.key, e, [32]byte{2}, nil)
	future, _ := nodetest.EpochRecord(t, val.key, e+2, [32]byte{}, nil)
	mine, _ := nodetest.EpochRecord(t, self.key, e, [32]byte{}, nil)
	stranger, _ := nodetest.EpochRecord(t, other.key, e, [32]byte{}, nil)
	strangerB, _ := nodetest.EpochRecord(t, other.key, e, [32]byte{3}, nil)
	proofOf := func(a, b []byte) []byte {
		p, err := protocol.NewEquivocationProof(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return other.seal(t, p)
	}
	steps := []struct {
		name   string
		topic  string
		data   []byte
		before func()
		want   pubsub.ValidationResult
	}{
		{"record", protocol.TopicEpoch, x, nil, pubsub.ValidationAccept},
		{"record from a non-validator", protocol.TopicEpoch, stranger, nil, pubsub.ValidationReject},
		{"record for a future epoch", protocol.TopicEpoch, future, nil, pubsub.ValidationIgnore}, // a skewed clock, not malice,
		{"stored record again", protocol.TopicEpoch, x, func() { st.PutEpochRecord(e, []byte(val.id), x) }, pubsub.ValidationIgnore},
		{"own stored record, being published", protocol.TopicEpoch, mine, func() { st.PutEpochRecord(e, []byte(self.id), mine) }, pubsub.ValidationAccept},
		{"a second, different record: relayed", protocol.TopicEpoch, y, nil, pubsub.ValidationAccept},
		{"proof against a non-validator", protocol.TopicEquivocation, proofOf(stranger, strangerB), nil, pubsub.ValidationReject},
		{"proof", protocol.TopicEquivocation, proofOf(x, y), nil, pubsub.ValidationAccept},
		{"proof already stored", protocol.TopicEquivocation, proofOf(x, z), func() {
			p, _ := protocol.NewEquivocationProof(x, y)
			raw, _ := proto.Marshal(p)
			st.PutEquivocation(e, []byte(val.id), raw)
		}, pubsub.ValidationIgnore},
		{"own stored proof, being published", protocol.TopicEquivocation, self.seal(t, mustProof(t, x, z)), nil, pubsub.ValidationAccept},
		{"a third record after the proof", protocol.TopicEpoch, z, nil, pubsub.ValidationIgnore},
		{"garbage proof", protocol.TopicEquivocation, []byte{1, 2, 3}, nil, pubsub.ValidationReject},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		o, d := v.topicCheck(s.topic, s.data, now)
		if d.result == pubsub.ValidationAccept {
			d = checkStored(st, self.id, o)
		}
		if d.result != s.want {
			t.Errorf("%s: got %s (%s), want %s", s.name, resultName(d.result), d.reason, resultName(s.want))
		}
	}
}
