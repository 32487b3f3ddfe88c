package node

import (
	"encoding/binary"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// A validator's home audits the same incrementally (--since) and after its
// old round evidence is pruned: the scorer resumes from its checkpoint, and
// a checkpoint that disagrees with the evidence after it is caught.
func TestAuditIncrementalAndPruned(t *testing.T) {
	tn, nodes, stores, e := runEpochs(t)
	tn.cancel()
	tn.wg.Wait()
	st, v := stores[0], nodes[0].ID()
	auditNow := func(since *uint64) *audit.Report {
		t.Helper()
		rep, err := audit.Audit(st, audit.Options{Since: since, Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{v}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	full := auditNow(nil)
	if len(full.Problems) > 0 || full.Recomputed < 2 {
		t.Fatalf("full audit: %+v", full)
	}
	if _, found, err := st.LatestCheckpoint([]byte(v), e); !found || err != nil {
		t.Fatalf("the validator stored no checkpoint before epoch %d: %v", e, err)
	}

	inc := auditNow(&e)
	if len(inc.Problems) > 0 || inc.Rounds == 0 || inc.Rounds >= full.Rounds || inc.Recomputed == 0 {
		t.Fatalf("audit --since %d: %+v (full: %d rounds)", e, inc, full.Rounds)
	}
	for ep, h := range inc.ConsensusHashes {
		if ep < e || full.ConsensusHashes[ep] != h {
			t.Errorf("audit --since: consensus of epoch %d is %s, full audit %s", ep, h, full.ConsensusHashes[ep])
		}
	}

	if err := st.PruneEvidence(e); err != nil {
		t.Fatal(err)
	}
	pruned := auditNow(nil)
	if len(pruned.Problems) > 0 || pruned.Pruned == 0 || pruned.EvidenceFrom != e || pruned.Rounds != inc.Rounds {
		t.Fatalf("audit after pruning below %d: %+v", e, pruned)
	}
	for ep, h := range full.ConsensusHashes {
		if pruned.ConsensusHashes[ep] != h {
			t.Errorf("consensus of epoch %d changed by pruning", ep)
		}
	}

	// Forge the checkpoint the scorer resumes from: a full penalty on a
	// miner that was verified in epoch e changes e's recomputed weights.
	cp, _, _ := st.LatestCheckpoint([]byte(v), e)
	var miner []byte
	for r, err := range st.Rounds(e, e) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == store.VerdictVerified {
			miner = r.Miner
		}
	}
	key := binary.BigEndian.AppendUint64([]byte{'c'}, cp.Epoch)
	key = append(key, v...)
	if err := st.Tamper(func(db *pebble.DB) error { return db.Delete(key, pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	forged := store.Checkpoint{Epoch: cp.Epoch, Validator: []byte(v), Penalties: map[string]float64{peer.ID(miner).String(): 1}}
	if err := st.PutCheckpoint(forged); err != nil {
		t.Fatal(err)
	}
	// It is caught by e's recomputed weights, or, where the penalty did not
	// change them, by e's own checkpoint,
	// which the forged one's penalty carries into.
	rep := auditNow(nil)
	if all := strings.Join(rep.Problems, "\n"); !strings.Contains(all, "weights differ") && !strings.Contains(all, "differs from the evidence") {
		t.Fatalf("forged checkpoint not caught: %v", rep.Problems)
	}
	// Without its checkpoint a pruned home cannot be audited, and says so.
	if err := st.Tamper(func(db *pebble.DB) error { return db.Delete(key, pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	rep = auditNow(nil)
	if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "no scorer checkpoint") {
		t.Fatalf("missing checkpoint: %v", rep.Problems)
	}
}

// A running validator prunes round evidence past its retention and its home
// still audits clean: the pruned epochs' records are checked without
// evidence and the later ones recomputed from the stored checkpoint.
func TestValidatorPrunesOldEvidence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		cfg.Network.FinalityEpochs, cfg.Node.RetainEvidence = 1, 0
		type closed struct {
			e uint64
			v peer.ID
		}
		events := make(chan closed, 256)
		v, st := tn.startWith(RoleValidator, cfg, cpu.Backend{}, func(o *Options) {
			o.OnEpochRecord = func(e uint64, p peer.ID) { events <- closed{e, p} }
		})
		tn.connect(tn.start(RoleMiner, cfg, cpu.Backend{}), v)
		var first uint64
		deadline := time.After(60 * time.Second)
		for first == 0 {
			select {
			case r := <-tn.records:
				if r.Verdict == store.VerdictVerified {
					first = r.Epoch
				}
			case <-deadline:
				t.Fatal("no verified round")
			}
		}
		// Epoch first's evidence goes at the boundary that starts first+2 (final
		// at the end of first+1, kept 0 epochs more); wait one epoch past that.
		for done := false; !done; {
			select {
			case ev := <-events:
				done = ev.v == v.ID() && ev.e >= first+2
			case <-deadline:
				t.Fatal("the validator did not close enough epochs")
			}
		}
		tn.cancel()
		tn.wg.Wait()
		from, err := st.EvidenceFrom()
		if err != nil || from <= first {
			t.Fatalf("evidence kept from epoch %d (%v), want past %d", from, err, first)
		}
		for r, err := range st.Rounds(0, from-1) {
			t.Fatalf("round of epoch %d survived pruning below %d (%v)", r.Epoch, from, err)
		}
		rep, err := audit.Audit(st, audit.Options{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{v.ID()}})
		if err != nil || len(rep.Problems) > 0 || rep.Pruned == 0 || rep.Recomputed == 0 {
			t.Fatalf("audit of the pruned home: %v %v (%d pruned, %d recomputed)", err, rep.Problems, rep.Pruned, rep.Recomputed)
		}
	})
}
