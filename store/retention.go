package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Retention state (SPEC.md §21). Key layout:
//
//	"c" ‖ BE64 epoch ‖ validator   -> scorer checkpoint after scoring epoch (EncodeCheckpointState)
//	"meta/evidence_from"           -> BE64 first epoch whose round evidence is kept
//
// Pruning deletes round records and announces of epochs below a bound and
// raises evidence_from to it first, so a missing record below the bound is
// known to be pruned, and one at or above it is lost evidence.
const checkpointTag = 'c'

var evidenceFromKey = []byte("meta/evidence_from")

// MaxCheckpointMiners bounds the penalties one checkpoint carries.
const MaxCheckpointMiners = 1 << 16

// Checkpoint is an epoch scorer's state after scoring Epoch: every miner's
// carried penalty (zero penalties are left out), by miner key.
type Checkpoint struct {
	Epoch     uint64
	Validator []byte
	Penalties map[string]float64
}

// PutCheckpoint stores a scorer checkpoint, durably. Checkpoints are a
// function of the evidence, so one is never replaced: the same state again
// returns nil, different state an error wrapping ErrExists.
func (s *Store) PutCheckpoint(c Checkpoint) error {
	if err := checkPeerID("validator", c.Validator); err != nil {
		return fmt.Errorf("store: invalid checkpoint: %w", err)
	}
	val, err := EncodeCheckpointState(c.Penalties)
	if err != nil {
		return fmt.Errorf("store: invalid checkpoint: %w", err)
	}
	desc := fmt.Sprintf("checkpoint epoch %d validator %x", c.Epoch, c.Validator)
	_, err = s.putNew(envelopeKey(checkpointTag, c.Epoch, c.Validator), val, pebble.Sync, desc, func(stored []byte) error {
		if !bytes.Equal(stored, val) {
			return fmt.Errorf("%w: %s, with different state", ErrExists, desc)
		}
		return nil
	})
	return err
}

// LatestCheckpoint returns validator's latest checkpoint of an epoch below
// before, and whether there is one.
func (s *Store) LatestCheckpoint(validator []byte, before uint64) (Checkpoint, bool, error) {
	if s.closed.Load() {
		return Checkpoint{}, false, ErrClosed
	}
	if before == 0 {
		return Checkpoint{}, false, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{checkpointTag}, UpperBound: epochPrefix(checkpointTag, before)})
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("store: %w", err)
	}
	defer it.Close()
	for ok := it.Last(); ok; ok = it.Prev() {
		k := it.Key()
		if len(k) < envelopeKeyMin || len(k) > envelopeKeyMax {
			return Checkpoint{}, false, fmt.Errorf("%w: checkpoint key %x", ErrCorrupt, k)
		}
		epoch, v := splitEnvelopeKey(k)
		if !bytes.Equal(v, validator) {
			continue
		}
		val, err := it.ValueAndErr()
		if err != nil {
			return Checkpoint{}, false, fmt.Errorf("store: %w", err)
		}
		p, err := DecodeCheckpointState(val)
		if err != nil {
			return Checkpoint{}, false, fmt.Errorf("%w: checkpoint epoch %d validator %x: %v", ErrCorrupt, epoch, v, err)
		}
		return Checkpoint{Epoch: epoch, Validator: v, Penalties: p}, true, nil
	}
	return Checkpoint{}, false, it.Error()
}

// EvidenceFrom is the first epoch whose round evidence this store keeps
// (0 if it never pruned).
func (s *Store) EvidenceFrom() (uint64, error) { return s.metaUint64(evidenceFromKey, "evidence_from") }

// metaUint64 reads a BE64 meta value under key (0 if absent); name names
// it in errors.
func (s *Store) metaUint64(key []byte, name string) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", name, err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %s value %x", ErrCorrupt, name, v)
	}
	return binary.BigEndian.Uint64(v), nil
}

// PruneEvidence deletes the round, host and off-schedule records and the
// announces of every epoch below `below`, after durably raising
// EvidenceFrom to it. Epoch records,
// final sets, equivocation proofs and checkpoints are kept. A bound at or
// below EvidenceFrom does nothing. After a write error the store refuses
// further writes, as PutRound describes.
func (s *Store) PruneEvidence(below uint64) error {
	from, err := s.EvidenceFrom()
	if err != nil || below <= from {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	// The bound first, in its own synced write: a crash between the two
	// leaves evidence the bound says is gone, which audits skip, never
	// missing evidence the bound says is kept. The head is lowered before
	// the deletion for the same reason: a crash between them leaves the
	// store holding more than the head counts, never less.
	if err := set(s.db, evidenceFromKey, binary.BigEndian.AppendUint64(nil, below), pebble.Sync); err != nil {
		return s.fail(fmt.Errorf("store: write evidence_from: %w", err))
	}
	if err := s.headPruned(below); err != nil {
		return s.fail(fmt.Errorf("store: prune below epoch %d: %w", below, err))
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, tag := range []byte{recordTag, announceTag, hostTag, offScheduleTag} {
		if err := b.DeleteRange(epochPrefix(tag, 0), epochPrefix(tag, below), nil); err != nil {
			return fmt.Errorf("store: prune: %w", err)
		}
	}
	if err := s.faults.await(func() error { return b.Commit(pebble.Sync) }); err != nil {
		return s.fail(fmt.Errorf("store: prune below epoch %d: %w", below, err))
	}
	return nil
}

// MaxCheckpointLen bounds an encoded checkpoint state.
const MaxCheckpointLen = 4 + MaxCheckpointMiners*(2+256+8)

// EncodeCheckpointState is a checkpoint's penalties as stored and as the
// evidence protocol serves them: BE32 count, then per miner in byte order:
// BE16 length ‖ miner key ‖ BE64 float bits. Only positive, finite
// penalties up to 1.
func EncodeCheckpointState(p map[string]float64) ([]byte, error) {
	miners := make([]string, 0, len(p))
	for m, x := range p {
		if !(x >= 0 && x <= 1) {
			return nil, fmt.Errorf("penalty %v of %q outside [0, 1]", x, m)
		}
		if x > 0 {
			miners = append(miners, m)
		}
	}
	if len(miners) > MaxCheckpointMiners {
		return nil, fmt.Errorf("%d miners, at most %d", len(miners), MaxCheckpointMiners)
	}
	slices.Sort(miners)
	v := binary.BigEndian.AppendUint32(nil, uint32(len(miners)))
	for _, m := range miners {
		if len(m) < 1 || len(m) > 256 {
			return nil, fmt.Errorf("miner key of %d bytes", len(m))
		}
		v = binary.BigEndian.AppendUint16(v, uint16(len(m)))
		v = append(v, m...)
		v = binary.BigEndian.AppendUint64(v, math.Float64bits(p[m]))
	}
	return v, nil
}

// DecodeCheckpointState reads EncodeCheckpointState's form; anything but
// its canonical encoding is an error.
func DecodeCheckpointState(v []byte) (map[string]float64, error) {
	orig := v
	if len(v) < 4 {
		return nil, fmt.Errorf("truncated")
	}
	n := binary.BigEndian.Uint32(v)
	if n > MaxCheckpointMiners {
		return nil, fmt.Errorf("%d miners, at most %d", n, MaxCheckpointMiners)
	}
	v = v[4:]
	out := make(map[string]float64, n)
	for range n {
		if len(v) < 2 {
			return nil, fmt.Errorf("truncated")
		}
		l := int(binary.BigEndian.Uint16(v))
		if len(v) < 2+l+8 {
			return nil, fmt.Errorf("truncated")
		}
		out[string(v[2:2+l])] = math.Float64frombits(binary.BigEndian.Uint64(v[2+l:]))
		v = v[2+l+8:]
	}
	if len(v) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(v))
	}
	// Re-encoding checks order, distinctness, ranges and lengths.
	if re, err := EncodeCheckpointState(out); err != nil || !bytes.Equal(re, orig) {
		return nil, fmt.Errorf("not a canonical checkpoint (%v)", err)
	}
	return out, nil
}
