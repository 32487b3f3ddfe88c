package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// TestOfflineAndLateNodesCatchUp runs two validators and a miner for
// epochs. An observer that was online for the first epoch is stopped and,
// epochs later, restarted on its own key and store; another node starts
// only then. Gossip brings them only new records: sync must bring every
// older one. Both end holding every record the validators held, with the
// same consensus, and their audits pass.
func TestOfflineAndLateNodesCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		// No epoch becomes final during the test: a node that froze an epoch
		// before a record reached it would rightly differ (SPEC §20), and that
		// is finality's subject, not sync's.
		cfg.Network.FinalityEpochs = 1000
		type ev struct {
			node  int
			epoch uint64
			v     peer.ID
		}
		events := make(chan ev, 4096)
		var nodes []*Node
		var stores []*store.Store
		// start runs node i (a new one if i == len(nodes)); reuse, if set, is
		// the node whose key and store it restarts with.
		start := func(role Role, reuse *Node) *Node {
			i := len(nodes)
			n, st := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
				if reuse != nil {
					o.Key, o.Store = reuse.key, reuse.store
				}
				o.OnEpochRecord = func(e uint64, v peer.ID) { events <- ev{i, e, v} }
			})
			if reuse != nil {
				st = reuse.store
			}
			nodes, stores = append(nodes, n), append(stores, st)
			return n
		}
		v0, v1, m, obs := start(RoleValidator, nil), start(RoleValidator, nil), start(RoleMiner, nil), start(RoleMiner, nil)
		tn.connect(v1, v0)
		tn.connect(m, v0)
		tn.connect(m, v1)
		tn.connect(obs, v0)
		// waitEpochs consumes events until both validators hold both
		// validators' records of n more epochs.
		held := map[uint64]int{}
		deadline := time.After(90 * time.Second)
		waitEpochs := func(n int) {
			for full := 0; full < n; {
				select {
				case e := <-events:
					if e.node < 2 {
						if held[e.epoch]++; held[e.epoch] == 4 {
							full++
						}
					}
				case <-deadline:
					t.Fatalf("validators did not publish %d epochs in time: %v", n, held)
				}
			}
		}
		waitEpochs(1)
		tn.stop(obs) // offline, its store kept
		waitEpochs(3)
		// Both must come to hold every record v0 holds before they (re)join.
		type key struct {
			epoch uint64
			v     peer.ID
		}
		want := map[int]map[key]bool{4: {}, 5: {}}
		var last uint64
		for ent, err := range stores[0].EpochRecords(0, ^uint64(0)) {
			if err != nil {
				t.Fatal(err)
			}
			k := key{ent.Epoch, peer.ID(ent.Validator)}
			if _, err := obs.store.EpochRecord(k.epoch, []byte(k.v)); err != nil {
				want[4][k] = true // the stopped node missed it
			}
			want[5][k] = true
			last = max(last, ent.Epoch)
		}
		if len(want[4]) < 6 || len(want[5]) < 8 {
			t.Fatalf("the stopped node lacks %d records, the late one %d: not enough missed to test", len(want[4]), len(want[5]))
		}
		restarted, late := start(RoleMiner, obs), start(RoleMiner, nil)
		tn.connect(restarted, v0)
		tn.connect(late, v1)
		timeout := time.After(30 * time.Second)
		for len(want[4])+len(want[5]) > 0 {
			select {
			case e := <-events:
				delete(want[e.node], key{e.epoch, e.v})
			case <-timeout:
				t.Fatalf("the restarted node still lacks %d records, the late one %d", len(want[4]), len(want[5]))
			}
		}
		// Consensus of an epoch both validators had published well before.
		e := last - 1
		a, err := epoch.Consensus(stores[0], e, nil, consensus.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{4, 5} {
			b, err := epoch.Consensus(stores[i], e, nil, consensus.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if a.Hash() != b.Hash() {
				t.Fatalf("node %d's consensus for epoch %d differs", i, e)
			}
			rep, err := audit.Audit(stores[i], audit.Options{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams()})
			if err != nil || len(rep.Problems) > 0 {
				t.Fatalf("node %d's audit: %v %v", i, err, rep.Problems)
			}
		}
	})
}
