package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// Signed envelopes from the network are stored verbatim, so that anyone can
// re-check their signatures: the value is one format byte
// (envelopeFormatV1) followed by the envelope's bytes, as received. The store
// does not parse envelopes; that the envelope under a key is for that key's
// epoch and peer is for whoever verifies its signature to check.
const envelopeFormatV1 = 1

// Bounds on stored envelopes.
const (
	MaxEpochRecordLen = 512 << 10
	MaxAnnounceLen    = 64 << 10
)

const (
	envelopeKeyMin = 1 + 8 + 1
	envelopeKeyMax = 1 + 8 + MaxPeerIDLen
)

// EpochEntry is one stored epoch record.
type EpochEntry struct {
	Epoch     uint64
	Validator []byte // the validator's peer ID bytes
	Envelope  []byte // the signed envelope, as received
}

// AnnounceEntry is one stored announce.
type AnnounceEntry struct {
	Epoch    uint64
	Miner    []byte // the miner's peer ID bytes
	Envelope []byte // the signed envelope, as received
}

// PutEpochRecord stores validator's signed epoch record for epoch, durably
// (fsync). Records are never replaced: storing the same bytes again returns
// nil (gossip redelivers), and storing different bytes under a stored key
// returns an error wrapping ErrExists. After a write error the store refuses
// further writes, as PutRound describes.
func (s *Store) PutEpochRecord(epoch uint64, validator, envelope []byte) error {
	if err := checkEnvelopeArgs("validator", validator, envelope, MaxEpochRecordLen); err != nil {
		return fmt.Errorf("store: invalid epoch record: %w", err)
	}
	desc := describeEpochKey(epoch, validator)
	_, err := s.putNew(envelopeKey(epochTag, epoch, validator), envelopeValue(envelope), pebble.Sync, desc, func(stored []byte) error {
		if err := checkEnvelopeValue(stored, MaxEpochRecordLen); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, desc, err)
		}
		if !bytes.Equal(stored[1:], envelope) {
			return fmt.Errorf("%w: %s, with different bytes", ErrExists, desc)
		}
		return nil
	})
	return err
}

// EpochRecord returns the envelope stored by PutEpochRecord for (epoch,
// validator), or an error wrapping ErrNotFound.
func (s *Store) EpochRecord(epoch uint64, validator []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := checkPeerID("validator", validator); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	desc := describeEpochKey(epoch, validator)
	return get(s, envelopeKey(epochTag, epoch, validator), desc, func(v []byte) ([]byte, error) {
		return checkedEnvelope(desc, v, MaxEpochRecordLen)
	})
}

// EpochRecords iterates over the epoch records of epochs fromEpoch..toEpoch
// inclusive, by epoch, then validator bytes. An error is yielded once, with
// a zero entry, and ends the iteration.
func (s *Store) EpochRecords(fromEpoch, toEpoch uint64) iter.Seq2[EpochEntry, error] {
	return scan(s, epochTag, fromEpoch, toEpoch, envelopeKeyMin, envelopeKeyMax, func(k, v []byte) (EpochEntry, error) {
		epoch, validator := splitEnvelopeKey(k)
		env, err := checkedEnvelope(describeEpochKey(epoch, validator), v, MaxEpochRecordLen)
		if err != nil {
			return EpochEntry{}, err
		}
		return EpochEntry{Epoch: epoch, Validator: validator, Envelope: env}, nil
	})
}

// PutAnnounce stores miner's signed announce for epoch if none is stored
// yet, reporting whether it did: the first announce of each (epoch, miner)
// is kept, and a later one returns false and a nil error, since miners
// announce repeatedly.
//
// Unlike the other writes, an announce is not synced to disk before
// PutAnnounce returns: miners re-announce, so losing the latest announce in
// a crash loses only a hint, and an fsync per gossip message would be costly.
// Pebble's log is ordered, so any later synced write (PutRound,
// PutEpochRecord) makes every earlier announce durable with it: evidence
// scored from an announce that was stored first never survives a crash
// without it. An announce write that fails in the background fails the next
// synced write instead, after which the store refuses writes.
func (s *Store) PutAnnounce(epoch uint64, miner, envelope []byte) (bool, error) {
	if err := checkEnvelopeArgs("miner", miner, envelope, MaxAnnounceLen); err != nil {
		return false, fmt.Errorf("store: invalid announce: %w", err)
	}
	desc := describeAnnounceKey(epoch, miner)
	return s.putNew(envelopeKey(announceTag, epoch, miner), envelopeValue(envelope), pebble.NoSync, desc, func(stored []byte) error {
		if err := checkEnvelopeValue(stored, MaxAnnounceLen); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, desc, err)
		}
		return nil
	})
}

// Announce returns the announce stored by PutAnnounce for (epoch, miner), or
// an error wrapping ErrNotFound.
func (s *Store) Announce(epoch uint64, miner []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := checkPeerID("miner", miner); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	desc := describeAnnounceKey(epoch, miner)
	return get(s, envelopeKey(announceTag, epoch, miner), desc, func(v []byte) ([]byte, error) {
		return checkedEnvelope(desc, v, MaxAnnounceLen)
	})
}

// Announces iterates over the announces of epoch by miner bytes. An error is
// yielded once, with a zero entry, and ends the iteration.
func (s *Store) Announces(epoch uint64) iter.Seq2[AnnounceEntry, error] {
	return scan(s, announceTag, epoch, epoch, envelopeKeyMin, envelopeKeyMax, func(k, v []byte) (AnnounceEntry, error) {
		epoch, miner := splitEnvelopeKey(k)
		env, err := checkedEnvelope(describeAnnounceKey(epoch, miner), v, MaxAnnounceLen)
		if err != nil {
			return AnnounceEntry{}, err
		}
		return AnnounceEntry{Epoch: epoch, Miner: miner, Envelope: env}, nil
	})
}

func checkPeerID(what string, id []byte) error {
	if n := len(id); n < 1 || n > MaxPeerIDLen {
		return fmt.Errorf("%s: %d bytes, want 1..%d", what, n, MaxPeerIDLen)
	}
	return nil
}

func checkEnvelopeArgs(what string, id, envelope []byte, max int) error {
	if err := checkPeerID(what, id); err != nil {
		return err
	}
	if n := len(envelope); n < 1 || n > max {
		return fmt.Errorf("envelope: %d bytes, want 1..%d", n, max)
	}
	return nil
}

func envelopeValue(envelope []byte) []byte {
	return append([]byte{envelopeFormatV1}, envelope...)
}

// checkEnvelopeValue checks a value written by envelopeValue, whose envelope
// is at most max bytes. The bytes come from disk and may be anything.
func checkEnvelopeValue(v []byte, max int) error {
	if len(v) == 0 {
		return fmt.Errorf("empty value")
	}
	if v[0] != envelopeFormatV1 {
		return fmt.Errorf("unknown format version %d", v[0])
	}
	if n := len(v) - 1; n < 1 || n > max {
		return fmt.Errorf("envelope: %d bytes, want 1..%d", n, max)
	}
	return nil
}

// decodeEnvelopeValue returns a copy of the envelope in a value written by
// envelopeValue, so that it does not alias Pebble's buffers.
func decodeEnvelopeValue(v []byte, max int) ([]byte, error) {
	if err := checkEnvelopeValue(v, max); err != nil {
		return nil, err
	}
	return bytes.Clone(v[1:]), nil
}

// checkedEnvelope decodes the value stored under the key desc names.
func checkedEnvelope(desc string, v []byte, max int) ([]byte, error) {
	env, err := decodeEnvelopeValue(v, max)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, desc, err)
	}
	return env, nil
}

func envelopeKey(tag byte, epoch uint64, id []byte) []byte {
	k := make([]byte, 0, 9+len(id))
	k = append(k, tag)
	k = binary.BigEndian.AppendUint64(k, epoch)
	return append(k, id...)
}

// splitEnvelopeKey returns the epoch and a copy of the peer ID of a key
// whose length scan has checked.
func splitEnvelopeKey(k []byte) (uint64, []byte) {
	return binary.BigEndian.Uint64(k[1:9]), bytes.Clone(k[9:])
}

func describeEpochKey(epoch uint64, validator []byte) string {
	return fmt.Sprintf("epoch record epoch %d validator %x", epoch, validator)
}

func describeAnnounceKey(epoch uint64, miner []byte) string {
	return fmt.Sprintf("announce epoch %d miner %x", epoch, miner)
}
