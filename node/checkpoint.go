package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/store"
)

// Scorer checkpoints and evidence retention (SPEC.md §21). A checkpoint is
// an EpochScorer's carried penalties after closing an epoch. A validator
// stores one per epoch, so that on start-up it resumes from the latest
// instead of replaying every epoch, and so that round evidence older than
// the retention can be pruned: the scorer resumes from the checkpoint at
// the pruning bound.

// resume loads the latest checkpoint below e into a scorer that has closed
// nothing yet, if Resume is set and there is one.
func (s *EpochScorer) resume(e uint64) error {
	if s.started || !s.Resume {
		return nil
	}
	cp, found, err := s.Store.LatestCheckpoint([]byte(s.Validator), e)
	if err != nil || !found {
		return err
	}
	s.penalties = maps.Clone(cp.Penalties)
	s.last, s.started = cp.Epoch, true
	return nil
}

// checkpoint stores the state after closing e, if Checkpoint is set.
func (s *EpochScorer) checkpoint(e uint64) error {
	if !s.Checkpoint {
		return nil
	}
	err := s.Store.PutCheckpoint(store.Checkpoint{Epoch: e, Validator: []byte(s.Validator), Penalties: s.penalties})
	if errors.Is(err, store.ErrExists) {
		return fmt.Errorf("the stored checkpoint of epoch %d differs from the state recomputed from the evidence: %w", e, err)
	}
	return err
}

// pruneBound is the first epoch whose round evidence must be kept at
// epoch current: evidence of epoch e is kept for retain epochs after e is
// final (the end of e+f), so epochs below current−f−retain may go. A
// validator's scorer and audit resume from a checkpoint, so a validator
// (v non-empty) prunes exactly up to its latest checkpoint below that
// bound, which a gap (epochs it was down or behind) does not move, and
// without one prunes nothing. ok is false when nothing may be pruned.
func pruneBound(st *store.Store, v peer.ID, current, f uint64, retain int) (uint64, bool, error) {
	if retain < 0 || current < f+uint64(retain)+1 {
		return 0, false, nil
	}
	bound := current - f - uint64(retain)
	if v == "" {
		return bound, true, nil
	}
	cp, found, err := st.LatestCheckpoint([]byte(v), bound)
	if err != nil || !found {
		return 0, false, err
	}
	return cp.Epoch + 1, true, nil
}

// finalityLoop freezes each epoch as it becomes final and prunes evidence
// past its retention, at every epoch boundary, until ctx ends.
func (n *Node) finalityLoop(ctx context.Context) {
	length := n.cfg.Network.EpochLength.Duration
	for {
		now := time.Now()
		if err := n.finality.tick(now); err != nil {
			n.log.Error("finalising epochs failed", "err", err)
		}
		if err := n.prune(now); err != nil {
			n.log.Error("pruning evidence failed", "err", err)
		}
		next := time.Unix(0, (now.UnixNano()/int64(length)+1)*int64(length))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
	}
}

// prune deletes round evidence past the retention.
func (n *Node) prune(now time.Time) error {
	var v peer.ID
	if n.validator != nil {
		v = n.ID()
	}
	bound, ok, err := pruneBound(n.store, v, n.view.epochAt(now), n.cfg.Network.FinalityEpochs, n.cfg.Node.RetainEvidence)
	if err != nil || !ok {
		return err
	}
	return n.store.PruneEvidence(bound)
}
