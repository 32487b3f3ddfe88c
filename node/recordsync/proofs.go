package recordsync

import (
	"bufio"
	"context"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// Equivocation proofs travel by gossip once, when they are built, so a node
// that was offline then fetches them by sync too (SPEC §22): without them it
// would count an equivocator's stake that every other node ignores.

const (
	// syncProofRequests bounds one pass's proof requests to one peer.
	syncProofRequests = 16
)

// writeProofs writes the stored proofs of epochs from on, in (epoch,
// validator) order: a header (BE32 count ‖ BE64 next) and count frames.
// next is 0 when nothing follows, else the epoch to ask from next.
func (y *Syncer) writeProofs(w *bufio.Writer, from uint64) error {
	var proofs [][]byte
	size, next, last := 0, uint64(0), uint64(0)
	for q, err := range y.st.Equivocations(from, ^uint64(0)) {
		if err != nil {
			return err
		}
		if len(proofs) == syncwire.MaxProofs || size+len(q.Proof) > syncwire.MaxProofsBytes {
			next = last + 1
			break
		}
		proofs, size, last = append(proofs, q.Proof), size+len(q.Proof), q.Epoch
	}
	return syncwire.WriteList(w, proofs, next)
}

// fetchProofs asks p for proofs of epochs from on; each must check
// (CheckEquivocation: two validly signed, different records of one
// validator for one epoch) and be for an epoch ≥ from and in order.
func (y *Syncer) fetchProofs(ctx context.Context, p peer.ID, from uint64) ([]*pb.EquivocationProof, uint64, error) {
	s, r, err := y.request(ctx, p, syncwire.EncodeProofsRequest(from))
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	n, next, err := readListHeader(r, "proofs")
	if err != nil {
		return nil, 0, err
	}
	if n > syncwire.MaxProofs || (next != 0 && next <= from) {
		return nil, 0, badPeer("proofs header: %d proofs, next %d for from %d", n, next, from)
	}
	var out []*pb.EquivocationProof
	last, size := from, 0
	for i := range n {
		b, err := readFrame(r, store.MaxEquivocationLen)
		if err != nil {
			return nil, 0, err
		}
		if size += len(b); size > syncwire.MaxProofsBytes {
			return nil, 0, badPeer("proofs response over %d bytes", syncwire.MaxProofsBytes)
		}
		var m pb.EquivocationProof
		if err := proto.Unmarshal(b, &m); err != nil {
			return nil, 0, badPeer("proof %d: %v", i, err)
		}
		eq, err := protocol.CheckEquivocation(&m)
		if err != nil {
			return nil, 0, badPeer("proof %d: %v", i, err)
		}
		if eq.Epoch < last || (next != 0 && eq.Epoch >= next) {
			return nil, 0, badPeer("proof %d for epoch %d out of order", i, eq.Epoch)
		}
		last = eq.Epoch
		out = append(out, &m)
	}
	return out, next, nil
}

// syncProofsFrom fetches the proofs p holds that this node lacks and hands
// each to DeliverProof; it returns how many were new here. The first pass
// with p asks from epoch 0; each later one from the epoch of the last proof
// the one before it received (proofs p gains for earlier epochs travel by
// gossip), so a long history costs one walk, spread over passes of at most
// syncProofRequests requests.
func (y *Syncer) syncProofsFrom(ctx context.Context, p peer.ID) (int, error) {
	if y.DeliverProof == nil {
		return 0, nil
	}
	y.mu.Lock()
	from := y.proofsFrom[p]
	y.mu.Unlock()
	added := 0
	defer func() {
		y.mu.Lock()
		y.proofsFrom[p] = from
		y.mu.Unlock()
	}()
	for range syncProofRequests {
		proofs, next, err := y.fetchProofs(ctx, p, from)
		if err != nil {
			return added, err
		}
		for _, m := range proofs {
			eq, _ := protocol.CheckEquivocation(m) // checked by fetchProofs
			held, err := y.st.HasEquivocation(eq.Epoch, []byte(eq.Validator))
			if err != nil {
				return added, err
			}
			if !held {
				y.DeliverProof(ctx, m)
				added++
			}
			from = eq.Epoch
		}
		if next == 0 {
			return added, nil
		}
		from = next
	}
	return added, nil // the next pass continues from here
}
