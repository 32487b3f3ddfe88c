package node

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/peer"
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
	audit := func(since *uint64) *AuditReport {
		t.Helper()
		rep, err := Audit(st, AuditOptions{Since: since, Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{v}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	full := audit(nil)
	if len(full.Problems) > 0 || full.Recomputed < 2 {
		t.Fatalf("full audit: %+v", full)
	}
	if _, found, err := st.LatestCheckpoint([]byte(v), e); !found || err != nil {
		t.Fatalf("the validator stored no checkpoint before epoch %d: %v", e, err)
	}

	inc := audit(&e)
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
	pruned := audit(nil)
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
	rep := audit(nil)
	if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), "weights differ") {
		t.Fatalf("forged checkpoint not caught: %v", rep.Problems)
	}
	// Without its checkpoint a pruned home cannot be audited, and says so.
	if err := st.Tamper(func(db *pebble.DB) error { return db.Delete(key, pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	rep = audit(nil)
	if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "no scorer checkpoint") {
		t.Fatalf("missing checkpoint: %v", rep.Problems)
	}
}
