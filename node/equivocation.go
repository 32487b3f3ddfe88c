package node

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// Equivocation (SPEC.md §20): two different records of one validator for
// one epoch. The store, not memory, decides: a record that differs from the
// stored one is relayed once, so that every node can build the proof, and a
// node that builds one stores and gossips it. After that, the validator's
// records and proofs for the epoch are not relayed again.

// checkStored refines an accepted gossip message with what the store
// holds.
func (n *Node) checkStored(o *protocol.Opened) decision { return checkStored(n.store, n.ID(), o) }

// checkStored decides an epoch record or proof by what st holds; self is
// this node's ID.
func checkStored(st *store.Store, self peer.ID, o *protocol.Opened) decision {
	var epoch uint64
	var validator []byte
	switch m := o.Msg.(type) {
	case *pb.EpochRecord:
		epoch, validator = m.Epoch, []byte(o.Author)
	case *pb.EquivocationProof:
		eq, err := protocol.CheckEquivocation(m)
		if err != nil {
			return reject(err.Error())
		}
		epoch, validator = eq.Epoch, []byte(eq.Validator)
	default:
		return accept
	}
	proven, err := st.HasEquivocation(epoch, validator)
	switch {
	case err != nil:
		return ignore("store: " + err.Error())
	case proven && o.Type == pb.MessageType_EQUIVOCATION_PROOF && o.Author == self:
		return accept // this node's own proof, stored before it is published
	case proven:
		return ignore("validator already proven to equivocate in this epoch")
	case o.Type == pb.MessageType_EQUIVOCATION_PROOF:
		return accept
	}
	stored, err := st.EpochRecord(epoch, validator)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return accept
	case err != nil:
		return ignore("store: " + err.Error())
	case bytes.Equal(stored, o.Raw) && o.Author == self:
		return accept // this validator's own record, stored before it is published
	case bytes.Equal(stored, o.Raw):
		return ignore("duplicate epoch record")
	}
	return accept // a second, different record: relayed so every node can prove it
}

// onEpochRecord stores another validator's record, or proves equivocation
// if a different one is stored.
func (n *Node) onEpochRecord(ctx context.Context, o *protocol.Opened) {
	rec := o.Msg.(*pb.EpochRecord)
	err := n.finality.PutRecord(time.Now(), rec.Epoch, []byte(o.Author), o.Raw)
	if errors.Is(err, store.ErrExists) {
		stored, err := n.store.EpochRecord(rec.Epoch, []byte(o.Author))
		if err != nil {
			n.log.Error("reading stored epoch record failed", "validator", o.Author, "epoch", rec.Epoch, "err", err)
			return
		}
		p, err := protocol.NewEquivocationProof(stored, o.Raw)
		if err != nil {
			n.log.Debug("second envelope of a stored epoch record", "validator", o.Author, "epoch", rec.Epoch, "err", err)
			return
		}
		n.addEquivocation(ctx, p, true)
		return
	}
	if err != nil {
		n.log.Error("storing epoch record failed", "validator", o.Author, "epoch", rec.Epoch, "err", err)
		return
	}
	n.log.Info("epoch record stored", "validator", o.Author, "epoch", rec.Epoch, "miners", len(rec.Weights))
	n.obs.gossip(time.Now(), o.Author, nil, rec)
	if f, err := n.store.Final(rec.Epoch); err == nil && !f.Counts([]byte(o.Author), protocol.ID(o.Body)) {
		n.log.Warn("epoch record arrived after its epoch was final: stored, not counted", "validator", o.Author, "epoch", rec.Epoch)
	}
	if n.onEpoch != nil {
		n.onEpoch(rec.Epoch, o.Author)
	}
	if o.Author == n.ID() && n.equivocate != nil {
		// The adversary: its own record came back from gossip, so it is
		// stored and out; publish a second one, if it made one.
		alt := proto.Clone(rec).(*pb.EpochRecord)
		if n.equivocate(alt); proto.Equal(alt, rec) {
			return
		}
		if _, err := n.publish(ctx, protocol.TopicEpoch, alt); err != nil && ctx.Err() == nil {
			n.log.Error("publishing the second epoch record failed", "err", err)
		}
	}
}

// addEquivocation stores a checked proof and, if this node built it and it
// is the first for its validator and epoch, gossips it.
func (n *Node) addEquivocation(ctx context.Context, p *pb.EquivocationProof, publish bool) {
	eq, err := protocol.CheckEquivocation(p)
	if err != nil {
		n.log.Error("equivocation proof does not check", "err", err)
		return
	}
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err == nil {
		var first bool
		first, err = n.finality.PutProof(time.Now(), eq.Epoch, []byte(eq.Validator), body)
		if err == nil && !first {
			return
		}
	}
	if err != nil {
		n.log.Error("storing equivocation proof failed", "validator", eq.Validator, "epoch", eq.Epoch, "err", err)
		return
	}
	n.log.Warn("validator equivocated: its stake counts for nothing in this epoch", "validator", eq.Validator, "epoch", eq.Epoch)
	if n.onEquivocation != nil {
		n.onEquivocation(eq.Epoch, eq.Validator)
	}
	if publish {
		if _, err := n.publish(ctx, protocol.TopicEquivocation, p); err != nil && ctx.Err() == nil {
			n.log.Error("gossiping equivocation proof failed", "err", err)
		}
	}
}
