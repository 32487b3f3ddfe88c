package audit

import (
	"bytes"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// proofLinks are, per validator, the record IDs of its proven
// equivocations, by epoch in increasing order: a later record may link to
// either record of a proof.
type proofLinks map[peer.ID][]proofLink

type proofLink struct {
	e   uint64
	ids [][32]byte
}

// since returns the IDs of v's proofs for epochs in [after, before), after
// being the epoch of the record held before, or in [0, before) if nothing
// of v is held yet (!held).
func (l proofLinks) since(v peer.ID, after uint64, held bool, before uint64) [][32]byte {
	var out [][32]byte
	for _, p := range l[v] {
		if (!held || p.e >= after) && p.e < before {
			out = append(out, p.ids...)
		}
	}
	return out
}

// auditEquivocations checks every stored equivocation proof of the epochs
// audited (both records verify, one author, one epoch, the key it is stored
// under) and returns the IDs of both records of each proof: after a proven
// equivocation, the validator's next record may link to either.
func auditEquivocations(st *store.Store, since, last uint64, want func(uint64) bool, rep *Report, bad func(string, ...any)) (proofLinks, error) {
	links := proofLinks{}
	for q, err := range st.Equivocations(0, last) {
		if err != nil {
			bad("equivocation proofs: %v", err)
			return nil, err
		}
		v := peer.ID(q.Validator)
		var p pb.EquivocationProof
		if err := proto.Unmarshal(q.Proof, &p); err != nil {
			bad("equivocation proof epoch %d against %s: %v", q.Epoch, v, err)
			continue
		}
		var ids [][32]byte
		if q.Epoch >= since {
			eq, err := protocol.CheckEquivocation(&p)
			switch {
			case err != nil:
				bad("equivocation proof epoch %d against %s: %v", q.Epoch, v, err)
				continue
			case eq.Epoch != q.Epoch || !bytes.Equal([]byte(eq.Validator), q.Validator):
				bad("equivocation proof stored as epoch %d against %s proves epoch %d against %s", q.Epoch, v, eq.Epoch, eq.Validator)
				continue
			}
			ids = [][32]byte{protocol.ID(eq.A.Body), protocol.ID(eq.B.Body)}
		} else {
			for _, raw := range [][]byte{p.RecordA, p.RecordB} {
				if o, err := protocol.Decode(raw, pb.MessageType_EPOCH_RECORD); err == nil {
					ids = append(ids, protocol.ID(o.Body))
				}
			}
		}
		if want(q.Epoch) {
			rep.Equivocations++
		}
		links[v] = append(links[v], proofLink{q.Epoch, ids})
	}
	return links, nil
}

// checkResume reports a store whose evidence was pruned without a
// checkpoint of v's scorer at the pruning bound to resume from.
func checkResume(st *store.Store, v peer.ID, start, evidenceFrom uint64) string {
	if evidenceFrom == 0 {
		return ""
	}
	cp, found, err := st.LatestCheckpoint([]byte(v), start)
	switch {
	case err != nil:
		return fmt.Sprintf("scorer checkpoint of %s: %v", v, err)
	case !found || cp.Epoch+1 < evidenceFrom:
		return noCheckpoint(v, evidenceFrom)
	}
	return ""
}

// noCheckpoint names a validator that pruned below from without its
// checkpoint of from − 1.
func noCheckpoint(v peer.ID, from uint64) string {
	return fmt.Sprintf("round evidence below epoch %d was pruned, but %s has no scorer checkpoint at epoch %d to resume from", from, v, from-1)
}

// checkCheckpoint compares a stored checkpoint of epoch e, if any, with the
// state the audit's scorer recomputed.
func checkCheckpoint(st *store.Store, v peer.ID, e uint64, s *epoch.Scorer) string {
	cp, found, err := st.LatestCheckpoint([]byte(v), e+1)
	if err != nil {
		return fmt.Sprintf("scorer checkpoint of %s: %v", v, err)
	}
	if !found || cp.Epoch != e {
		return ""
	}
	got := 0
	for m, p := range s.Penalties() {
		if p > 0 {
			got++
			if cp.Penalties[m] != p {
				return fmt.Sprintf("scorer checkpoint of epoch %d of %s differs from the evidence (miner %s)", e, v, m)
			}
		}
	}
	if got != len(cp.Penalties) {
		return fmt.Sprintf("scorer checkpoint of epoch %d of %s differs from the evidence", e, v)
	}
	return ""
}
