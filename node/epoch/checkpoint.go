package epoch

import (
	"errors"
	"fmt"
	"maps"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/store"
)

// Scorer checkpoints and evidence retention (SPEC.md §21). A checkpoint is
// a Scorer's carried penalties after closing an epoch. A validator
// stores one per epoch, so that on start-up it resumes from the latest
// instead of replaying every epoch, and so that round evidence older than
// the retention can be pruned: the scorer resumes from the checkpoint at
// the pruning bound.

// resume loads the latest checkpoint below e into a scorer that has closed
// nothing yet, if Resume is set and there is one.
func (s *Scorer) resume(e uint64) error {
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
func (s *Scorer) checkpoint(e uint64) error {
	if !s.Checkpoint {
		return nil
	}
	err := s.Store.PutCheckpoint(store.Checkpoint{Epoch: e, Validator: []byte(s.Validator), Penalties: s.penalties})
	if errors.Is(err, store.ErrExists) {
		return fmt.Errorf("the stored checkpoint of epoch %d differs from the state recomputed from the evidence: %w", e, err)
	}
	return err
}

// PruneBound is the first epoch whose round evidence must be kept at
// epoch current: evidence of epoch e is kept for retain epochs after e is
// final (the end of e+f), so epochs below current−f−retain may go. A
// validator's scorer and audit resume from a checkpoint, so a validator
// (v non-empty) prunes exactly up to its latest checkpoint below that
// bound, which a gap (epochs it was down or behind) does not move, and
// without one prunes nothing. ok is false when nothing may be pruned.
func PruneBound(st *store.Store, v peer.ID, current, f uint64, retain int) (uint64, bool, error) {
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

// Penalties are the miners' penalties the scorer carries into its next
// epoch, what a checkpoint stores; the caller must not modify them.
func (s *Scorer) Penalties() map[string]float64 { return s.penalties }
