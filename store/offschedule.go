package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// Off-schedule challenges (SPEC §16) are kept as evidence against their
// signer:
//
//	"o" ‖ BE64 epoch ‖ u8 len ‖ signer ‖ challenge ID[32] -> BE64 receipt (Unix ns) ‖ challenge envelope
//
// The epoch is the receipt's. At most MaxOffSchedule are kept per signer
// and epoch, so a signer's flood cannot grow the store past that; they are
// pruned with the round records.
const offScheduleTag = 'o'

// MaxOffSchedule is how many off-schedule challenges of one signer an
// epoch keeps.
const MaxOffSchedule = 16

// maxOffScheduleEnvelope bounds a kept envelope: a gossip message's size.
const maxOffScheduleEnvelope = 16 << 10

// MaxOffScheduleLen bounds an off-schedule challenge as the evidence
// protocol serves it: BE64 receipt ‖ envelope.
const MaxOffScheduleLen = 8 + maxOffScheduleEnvelope

// OffSchedule is a signed challenge this node refused as off schedule.
type OffSchedule struct {
	Epoch    uint64   // of its receipt
	Signer   []byte   // its author's peer ID bytes
	ID       [32]byte // the challenge's ID
	At       int64    // receipt, Unix ns
	Envelope []byte   // the challenge envelope as received
}

func offSchedulePrefix(epoch uint64, signer []byte) []byte {
	k := binary.BigEndian.AppendUint64([]byte{offScheduleTag}, epoch)
	k = append(k, byte(len(signer)))
	return append(k, signer...)
}

// PutOffSchedule keeps o, synced, and reports whether it was stored: not
// if it is stored already or its signer has MaxOffSchedule in its epoch.
func (s *Store) PutOffSchedule(o OffSchedule) (bool, error) {
	switch {
	case len(o.Signer) < 1 || len(o.Signer) > MaxPeerIDLen:
		return false, fmt.Errorf("store: off-schedule signer of %d bytes", len(o.Signer))
	case len(o.Envelope) < 1 || len(o.Envelope) > maxOffScheduleEnvelope:
		return false, fmt.Errorf("store: off-schedule envelope of %d bytes", len(o.Envelope))
	}
	prefix := offSchedulePrefix(o.Epoch, o.Signer)
	s.offMu.Lock()
	defer s.offMu.Unlock()
	if n, err := s.countPrefix(prefix, MaxOffSchedule); err != nil || n >= MaxOffSchedule {
		return false, err
	}
	val := append(binary.BigEndian.AppendUint64(nil, uint64(o.At)), o.Envelope...)
	desc := fmt.Sprintf("off-schedule challenge %x of epoch %d", o.ID[:8], o.Epoch)
	return s.putNew(append(prefix, o.ID[:]...), val, pebble.Sync, desc, func([]byte) error { return nil })
}

// countPrefix counts the keys under prefix, up to limit.
func (s *Store) countPrefix(prefix []byte, limit int) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	// Above every prefix ‖ 32-byte ID, those starting 0xff included.
	upper := append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 33)...)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok && n < limit; ok = it.Next() {
		if bytes.HasPrefix(it.Key(), prefix) && len(it.Key()) == len(prefix)+32 {
			n++
		}
	}
	return n, it.Error()
}

// OffSchedules iterates over the off-schedule challenges kept for epochs
// fromEpoch..toEpoch inclusive, by epoch, signer and ID; a malformed key
// or value is ErrCorrupt.
func (s *Store) OffSchedules(fromEpoch, toEpoch uint64) iter.Seq2[OffSchedule, error] {
	return scan(s, offScheduleTag, fromEpoch, toEpoch, 1+8+1+1+32, 1+8+1+MaxPeerIDLen+32, decodeOffSchedule)
}

// decodeOffSchedule decodes one kept challenge's key and value, which must
// be as PutOffSchedule writes them (else ErrCorrupt): served as they are,
// a longer envelope would make this node look a bad peer.
func decodeOffSchedule(k, v []byte) (OffSchedule, error) {
	if len(k) < 1+8+1 || k[0] != offScheduleTag || k[9] < 1 || int(k[9]) > MaxPeerIDLen || len(k) != 1+8+1+int(k[9])+32 || len(v) <= 8 || len(v) > MaxOffScheduleLen {
		return OffSchedule{}, fmt.Errorf("%w: off-schedule key %x (%d-byte value)", ErrCorrupt, k, len(v))
	}
	n := int(k[9])
	return OffSchedule{Epoch: binary.BigEndian.Uint64(k[1:9]), Signer: bytes.Clone(k[10 : 10+n]), ID: [32]byte(k[10+n:]),
		At: int64(binary.BigEndian.Uint64(v)), Envelope: bytes.Clone(v[8:])}, nil
}
