package node

import (
	"encoding/binary"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

type epochEvent struct {
	node      int
	epoch     uint64
	validator peer.ID
}

// runEpochs runs three validators and two miners with 2-second epochs on a
// simulated network, in the caller's synctest bubble, until every node holds
// every validator's record for two epochs in which all of them had evidence,
// and returns the nodes' stores and that last epoch.
func runEpochs(t *testing.T) (*testNet, []*Node, []*store.Store, uint64) {
	tn := newSimTestNet(t)
	cfg := testConfig()
	cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
	events := make(chan epochEvent, 1024)
	var nodes []*Node
	var stores []*store.Store
	start := func(role Role) {
		i := len(nodes)
		n, st := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
			o.OnEpochRecord = func(e uint64, v peer.ID) { events <- epochEvent{i, e, v} }
		})
		nodes, stores = append(nodes, n), append(stores, st)
	}
	for i := 0; i < 3; i++ {
		start(RoleValidator)
	}
	for i := 0; i < 2; i++ {
		start(RoleMiner)
	}
	for i := 1; i < len(nodes); i++ {
		for j := 0; j < i && j < 3; j++ {
			tn.connect(nodes[i], nodes[j])
		}
	}
	// Epoch e is complete when all 5 nodes hold all 3 validators' records
	// and each validator verified a round in it.
	have := map[uint64]map[[2]string]bool{}
	verified := map[uint64]map[string]bool{}
	complete := func(e uint64) bool { return len(have[e]) == 15 && len(verified[e]) == 3 }
	first := nodes[0].view.epochAt(time.Now()) + 1 // the first epoch every validator saw whole
	deadline := time.After(90 * time.Second)
	for {
		select {
		case ev := <-events:
			if have[ev.epoch] == nil {
				have[ev.epoch] = map[[2]string]bool{}
			}
			have[ev.epoch][[2]string{string(rune('0' + ev.node)), string(ev.validator)}] = true
		case r := <-tn.records:
			if r.Verdict == store.VerdictVerified {
				if verified[r.Epoch] == nil {
					verified[r.Epoch] = map[string]bool{}
				}
				verified[r.Epoch][string(r.Validator)] = true
			}
		case <-deadline:
			t.Fatalf("epoch records did not reach every node in time: %d epochs seen", len(have))
		}
		for e := range have {
			if e >= first+1 && complete(e) && complete(e-1) {
				return tn, nodes, stores, e
			}
		}
	}
}

// Every node, validator or miner, computes the same consensus from the
// records it holds, and each validator's records audit clean.
func TestConsensusIdenticalOnEveryNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, nodes, stores, e := runEpochs(t)
		var want [32]byte
		for i, st := range stores {
			res, err := epoch.Consensus(st, e, nil, consensus.DefaultParams())
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
			if len(res.Validators) != 3 {
				t.Fatalf("node %d: consensus over %d validators", i, len(res.Validators))
			}
			if i == 0 {
				want = res.Hash()
				var total float64
				for _, x := range res.Incentive {
					total += x
				}
				if total < 0.999 {
					t.Fatalf("incentives sum to %v: no miner was scored", total)
				}
			} else if res.Hash() != want {
				t.Fatalf("node %d (%s) computed another consensus for epoch %d", i, nodes[i].role, e)
			}
		}
		for i := 0; i < 3; i++ {
			rep, err := audit.Audit(stores[i], audit.Options{Epoch: &e, Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams()})
			if err != nil || len(rep.Problems) > 0 {
				t.Fatalf("validator %d audit: %v %v", i, err, rep.Problems)
			}
			if rep.Recomputed == 0 || rep.ProofsVerified == 0 {
				t.Fatalf("validator %d audit checked nothing: %+v", i, rep)
			}
		}
	})
}

// TestAuditDetectsTampering flips a byte of a stored value, deletes a round
// record, deletes an epoch record and swaps two records; each is caught.
func TestAuditDetectsTampering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn, _, stores, e := runEpochs(t)
		tn.cancel()
		tn.wg.Wait()
		st := stores[0]
		auditNow := func() []string {
			rep, err := audit.Audit(st, audit.Options{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams()})
			if err != nil {
				t.Fatal(err)
			}
			return rep.Problems
		}
		if p := auditNow(); len(p) > 0 {
			t.Fatalf("untampered store fails its audit: %v", p)
		}
		var rounds [][]byte
		var vals [][]byte
		err := st.Tamper(func(db *pebble.DB) error {
			it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("r"), UpperBound: []byte("s")})
			if err != nil {
				return err
			}
			defer it.Close()
			for it.First(); it.Valid(); it.Next() {
				rounds = append(rounds, append([]byte(nil), it.Key()...))
				vals = append(vals, append([]byte(nil), it.Value()...))
			}
			return nil
		})
		if err != nil || len(rounds) < 2 {
			t.Fatalf("reading round keys: %v (%d)", err, len(rounds))
		}
		// Rounds of epochs after e are not yet committed to by any record: pick
		// a round of epoch e, whose record exists, to delete.
		del := 0
		for i, k := range rounds {
			if binary.BigEndian.Uint64(k[1:9]) == e {
				del = i
			}
		}
		epochKey := store.EpochRecordKey(e-1, []byte(peerOf(t, st, e-1)))
		tests := []struct {
			name   string
			tamper func(db *pebble.DB) error
			undo   func(db *pebble.DB) error
		}{
			{"flip a byte of a round record", func(db *pebble.DB) error {
				v := append([]byte(nil), vals[0]...)
				v[len(v)/2] ^= 0x01
				return db.Set(rounds[0], v, pebble.Sync)
			}, func(db *pebble.DB) error { return db.Set(rounds[0], vals[0], pebble.Sync) }},
			{"delete a round record", func(db *pebble.DB) error { return db.Delete(rounds[del], pebble.Sync) },
				func(db *pebble.DB) error { return db.Set(rounds[del], vals[del], pebble.Sync) }},
			{"swap two round records", func(db *pebble.DB) error {
				if err := db.Set(rounds[0], vals[1], pebble.Sync); err != nil {
					return err
				}
				return db.Set(rounds[1], vals[0], pebble.Sync)
			}, func(db *pebble.DB) error {
				if err := db.Set(rounds[0], vals[0], pebble.Sync); err != nil {
					return err
				}
				return db.Set(rounds[1], vals[1], pebble.Sync)
			}},
		}
		var saved []byte
		tests = append(tests, struct {
			name   string
			tamper func(db *pebble.DB) error
			undo   func(db *pebble.DB) error
		}{"delete an epoch record", func(db *pebble.DB) error {
			v, closer, err := db.Get(epochKey)
			if err != nil {
				return err
			}
			saved = append([]byte(nil), v...)
			closer.Close()
			return db.Delete(epochKey, pebble.Sync)
		}, func(db *pebble.DB) error { return db.Set(epochKey, saved, pebble.Sync) }})
		for _, tt := range tests {
			if err := st.Tamper(tt.tamper); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if p := auditNow(); len(p) == 0 {
				t.Errorf("%s: not detected", tt.name)
			} else {
				t.Logf("%s: %s", tt.name, p[0])
			}
			if err := st.Tamper(tt.undo); err != nil {
				t.Fatal(err)
			}
			if p := auditNow(); len(p) > 0 {
				t.Fatalf("after undoing %s: %v", tt.name, p)
			}
		}
	})
}

// peerOf returns the validator whose round evidence is in st.
func peerOf(t *testing.T, st *store.Store, e uint64) peer.ID {
	for r, err := range st.Rounds(0, e) {
		if err != nil {
			t.Fatal(err)
		}
		return peer.ID(r.Validator)
	}
	t.Fatal(errors.New("no round records"))
	return ""
}
