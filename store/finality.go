package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Finality and equivocation state (SPEC.md §20). Key layout:
//
//	"f" ‖ BE64 epoch               -> final set of the epoch (encodeFinal)
//	"q" ‖ BE64 epoch ‖ validator   -> 1 ‖ equivocation proof (pb.EquivocationProof bytes)
//
// A final set is written once, when this node's clock passes the epoch's
// finality time: it names the records that count in the epoch's consensus,
// so records stored after it are kept but ignored.
const (
	finalTag        = 'f'
	equivocationTag = 'q'
)

// Bounds on finality state.
const (
	MaxFinalValidators = 4096
	MaxEquivocationLen = 2*MaxEpochRecordLen + 1<<10
	finalFormatV1      = 1
)

// FinalRecord names one record that counts in a final epoch.
type FinalRecord struct {
	Validator []byte
	ID        [32]byte // protocol.ID of the record's signed body
}

// FinalSet is what an epoch's consensus is computed from once final: the
// records that count, and the validators proven to have equivocated, whose
// stake counts for nothing. Both are sorted by validator bytes, distinct.
type FinalSet struct {
	Included []FinalRecord
	Excluded [][]byte
}

// EquivocationEntry is one stored equivocation proof.
type EquivocationEntry struct {
	Epoch     uint64
	Validator []byte
	Proof     []byte // pb.EquivocationProof, marshalled
}

// PutFinal stores epoch's final set, durably. It is never replaced: the
// same set again returns nil, a different one an error wrapping ErrExists.
func (s *Store) PutFinal(epoch uint64, f FinalSet) error {
	val, err := encodeFinal(f)
	if err != nil {
		return fmt.Errorf("store: invalid final set: %w", err)
	}
	desc := fmt.Sprintf("final set of epoch %d", epoch)
	_, err = s.putNew(epochPrefix(finalTag, epoch), val, pebble.Sync, desc, func(stored []byte) error {
		if !bytes.Equal(stored, val) {
			return fmt.Errorf("%w: %s, with different contents", ErrExists, desc)
		}
		return nil
	})
	return err
}

// Final returns epoch's final set, or an error wrapping ErrNotFound if the
// epoch was not finalised on this node.
func (s *Store) Final(epoch uint64) (FinalSet, error) {
	if s.closed.Load() {
		return FinalSet{}, ErrClosed
	}
	desc := fmt.Sprintf("final set of epoch %d", epoch)
	return get(s, epochPrefix(finalTag, epoch), desc, func(v []byte) (FinalSet, error) {
		f, err := decodeFinal(v)
		if err != nil {
			return FinalSet{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, desc, err)
		}
		return f, nil
	})
}

// LastFinal returns the highest finalised epoch, and whether there is one.
func (s *Store) LastFinal() (uint64, bool, error) {
	if s.closed.Load() {
		return 0, false, ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{finalTag}, UpperBound: []byte{finalTag + 1}})
	if err != nil {
		return 0, false, fmt.Errorf("store: %w", err)
	}
	defer it.Close()
	if !it.Last() {
		return 0, false, it.Error()
	}
	if k := it.Key(); len(k) != 9 {
		return 0, false, fmt.Errorf("%w: final key %x", ErrCorrupt, k)
	}
	return binary.BigEndian.Uint64(it.Key()[1:]), true, nil
}

// PutEquivocation stores a proof that validator equivocated in epoch,
// durably, reporting whether it did: the first proof of each (epoch,
// validator) is kept, since any one proves the offence. The store does not
// parse the proof; the caller checks it (protocol.CheckEquivocation).
func (s *Store) PutEquivocation(epoch uint64, validator, proof []byte) (bool, error) {
	if err := checkEnvelopeArgs("validator", validator, proof, MaxEquivocationLen); err != nil {
		return false, fmt.Errorf("store: invalid equivocation proof: %w", err)
	}
	desc := describeEquivocationKey(epoch, validator)
	return s.putNew(envelopeKey(equivocationTag, epoch, validator), envelopeValue(proof), pebble.Sync, desc, func(stored []byte) error {
		if err := checkEnvelopeValue(stored, MaxEquivocationLen); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, desc, err)
		}
		return nil
	})
}

// Equivocations iterates over the stored proofs of epochs fromEpoch..toEpoch
// inclusive, by epoch then validator. An error is yielded once, with a zero
// entry, and ends the iteration.
func (s *Store) Equivocations(fromEpoch, toEpoch uint64) iter.Seq2[EquivocationEntry, error] {
	return scan(s, equivocationTag, fromEpoch, toEpoch, envelopeKeyMin, envelopeKeyMax, func(k, v []byte) (EquivocationEntry, error) {
		epoch, validator := splitEnvelopeKey(k)
		p, err := checkedEnvelope(describeEquivocationKey(epoch, validator), v, MaxEquivocationLen)
		if err != nil {
			return EquivocationEntry{}, err
		}
		return EquivocationEntry{Epoch: epoch, Validator: validator, Proof: p}, nil
	})
}

func describeEquivocationKey(epoch uint64, validator []byte) string {
	return fmt.Sprintf("equivocation proof epoch %d validator %x", epoch, validator)
}

// encodeFinal: format byte, BE16 count and each included record as
// length byte ‖ validator ‖ 32-byte ID, then BE16 count and each excluded
// validator as length byte ‖ validator.
func encodeFinal(f FinalSet) ([]byte, error) {
	if len(f.Included) > MaxFinalValidators || len(f.Excluded) > MaxFinalValidators {
		return nil, fmt.Errorf("%d included and %d excluded validators, at most %d each", len(f.Included), len(f.Excluded), MaxFinalValidators)
	}
	inc := make([][]byte, len(f.Included))
	for i, r := range f.Included {
		inc[i] = r.Validator
	}
	for _, ids := range [][][]byte{inc, f.Excluded} {
		for i, id := range ids {
			if err := checkPeerID("validator", id); err != nil {
				return nil, err
			}
			if i > 0 && bytes.Compare(ids[i-1], id) >= 0 {
				return nil, fmt.Errorf("validators not sorted and distinct at %d", i)
			}
		}
	}
	v := []byte{finalFormatV1}
	v = binary.BigEndian.AppendUint16(v, uint16(len(f.Included)))
	for _, r := range f.Included {
		v = append(append(append(v, byte(len(r.Validator))), r.Validator...), r.ID[:]...)
	}
	v = binary.BigEndian.AppendUint16(v, uint16(len(f.Excluded)))
	for _, id := range f.Excluded {
		v = append(append(v, byte(len(id))), id...)
	}
	return v, nil
}

// decodeFinal parses encodeFinal's output; the bytes come from disk and
// may be anything.
func decodeFinal(v []byte) (FinalSet, error) {
	var f FinalSet
	if len(v) < 1 || v[0] != finalFormatV1 {
		return f, fmt.Errorf("unknown final set format")
	}
	v = v[1:]
	id := func(withRecord bool) ([]byte, [32]byte, bool) {
		var rid [32]byte
		if len(v) < 1 {
			return nil, rid, false
		}
		n := int(v[0])
		need := 1 + n
		if withRecord {
			need += 32
		}
		if n < 1 || n > MaxPeerIDLen || len(v) < need {
			return nil, rid, false
		}
		p := bytes.Clone(v[1 : 1+n])
		if withRecord {
			copy(rid[:], v[1+n:need])
		}
		v = v[need:]
		return p, rid, true
	}
	count := func() (int, bool) {
		if len(v) < 2 {
			return 0, false
		}
		n := int(binary.BigEndian.Uint16(v))
		v = v[2:]
		return n, n <= MaxFinalValidators
	}
	n, ok := count()
	for i := 0; ok && i < n; i++ {
		var r FinalRecord
		r.Validator, r.ID, ok = id(true)
		f.Included = append(f.Included, r)
	}
	if ok {
		n, ok = count()
	}
	for i := 0; ok && i < n; i++ {
		var p []byte
		p, _, ok = id(false)
		f.Excluded = append(f.Excluded, p)
	}
	if !ok || len(v) != 0 {
		return FinalSet{}, fmt.Errorf("truncated or overlong final set")
	}
	// Re-encoding checks order and distinctness.
	if _, err := encodeFinal(f); err != nil {
		return FinalSet{}, err
	}
	return f, nil
}

// Counts reports whether the final set counts validator's record id.
func (f FinalSet) Counts(validator []byte, id [32]byte) bool {
	i, found := slices.BinarySearchFunc(f.Included, validator, func(r FinalRecord, v []byte) int { return bytes.Compare(r.Validator, v) })
	return found && f.Included[i].ID == id
}

// IsExcluded reports whether validator is a proven equivocator in f.
func (f FinalSet) IsExcluded(validator []byte) bool {
	_, found := slices.BinarySearchFunc(f.Excluded, validator, bytes.Compare)
	return found
}

// HasEquivocation reports whether a proof against validator for epoch is
// stored.
func (s *Store) HasEquivocation(epoch uint64, validator []byte) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := checkPeerID("validator", validator); err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	_, err := get(s, envelopeKey(equivocationTag, epoch, validator), describeEquivocationKey(epoch, validator), func([]byte) (struct{}, error) {
		return struct{}{}, nil
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
