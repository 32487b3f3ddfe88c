package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// HostRecord is one validator's evidence of one host round (SPEC §23.8)
// with one miner, stored under
//
//	"h" ‖ BE64 epoch ‖ BE64 round ‖ miner -> host record
//
// Round numbers are the validator's, shared with its round records. Host
// records are not counted in the head (like announces) and are pruned with
// the round records.
type HostRecord struct {
	Epoch, Round uint64
	Miner        []byte   // miner peer ID bytes (1..64)
	Validator    []byte   // validator peer ID bytes (1..64)
	Challenge    []byte   // the host challenge as sent (1..MaxHostChallengeLen)
	Secret       [32]byte // the revealed sampling secret
	RTTNanos     int64    // ping round trip subtracted from the root's arrival (≥ 0)
	RootNanos    int64    // challenge sent → root arrival, monotonic; 0 if no root
	Root         [32]byte // the miner's checkpoint root; zero if none
	Opening      []byte   // the opening as received (≤ MaxHostOpeningLen); empty if none
	VerifyNanos  int64    // the validator's checking time (≥ 0)
	Verdict      Verdict
	Missed       bool   // nothing was proven (no root in time, a broken stream)
	Reason       string // why it failed (1 B .. 4 KiB); empty if verified
}

// Host record bounds.
const (
	MaxHostChallengeLen = 1 << 10
	MaxHostOpeningLen   = 4 << 20 // a storage audit opens up to 32 blocks of 64 KiB
	hostTag             = 'h'
	hostFormatV1        = 1
)

func (r *HostRecord) validate() error {
	switch {
	case len(r.Miner) < 1 || len(r.Miner) > MaxPeerIDLen:
		return fmt.Errorf("miner: %d bytes, want 1..%d", len(r.Miner), MaxPeerIDLen)
	case len(r.Validator) < 1 || len(r.Validator) > MaxPeerIDLen:
		return fmt.Errorf("validator: %d bytes, want 1..%d", len(r.Validator), MaxPeerIDLen)
	case len(r.Challenge) < 1 || len(r.Challenge) > MaxHostChallengeLen:
		return fmt.Errorf("challenge: %d bytes, want 1..%d", len(r.Challenge), MaxHostChallengeLen)
	case len(r.Opening) > MaxHostOpeningLen:
		return fmt.Errorf("opening: %d bytes, want at most %d", len(r.Opening), MaxHostOpeningLen)
	case len(r.Reason) > MaxReasonLen:
		return fmt.Errorf("reason: %d bytes, want at most %d", len(r.Reason), MaxReasonLen)
	case r.RTTNanos < 0 || r.RootNanos < 0 || r.VerifyNanos < 0:
		return errors.New("negative duration")
	case r.Verdict == VerdictVerified && (r.Reason != "" || r.Missed || r.RootNanos == 0 || len(r.Opening) == 0):
		return errors.New("verified without a root and an opening, or with a reason")
	case r.Verdict == VerdictFailed && r.Reason == "":
		return errors.New("failed without a reason")
	case r.Verdict != VerdictVerified && r.Verdict != VerdictFailed:
		return fmt.Errorf("verdict %v", r.Verdict)
	}
	return nil
}

// EncodeHost is a host record's canonical encoding, the bytes PutHost
// stores: format byte 1 ‖ uvarint epoch ‖ uvarint round ‖ miner ‖
// validator ‖ challenge ‖ secret(32) ‖ varint rtt ‖ varint root_nanos ‖
// root(32) ‖ opening ‖ varint verify_nanos ‖ verdict byte ‖ missed byte ‖
// reason, each variable field as uvarint length ‖ bytes. r must be valid.
func EncodeHost(r *HostRecord) []byte {
	b := []byte{hostFormatV1}
	b = binary.AppendUvarint(b, r.Epoch)
	b = binary.AppendUvarint(b, r.Round)
	for _, f := range [][]byte{r.Miner, r.Validator, r.Challenge} {
		b = appendField(b, f)
	}
	b = append(b, r.Secret[:]...)
	b = binary.AppendVarint(b, r.RTTNanos)
	b = binary.AppendVarint(b, r.RootNanos)
	b = append(b, r.Root[:]...)
	b = appendField(b, r.Opening)
	b = binary.AppendVarint(b, r.VerifyNanos)
	missed := byte(0)
	if r.Missed {
		missed = 1
	}
	b = append(b, byte(r.Verdict), missed)
	return appendField(b, []byte(r.Reason))
}

func appendField(b, f []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(f))), f...)
}

// hostReader reads EncodeHost's fields, checking every length first.
type hostReader struct {
	b   []byte
	err error
}

func (d *hostReader) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("host record: %s truncated or too long", what)
	}
}

func (d *hostReader) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *hostReader) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *hostReader) fixed(what string, n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail(what)
		return nil
	}
	f := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return f
}

func (d *hostReader) field(what string, max int) []byte {
	n := d.uvarint(what)
	if n > uint64(max) {
		d.fail(what)
		return nil
	}
	return d.fixed(what, int(n))
}

// DecodeHost parses and validates EncodeHost's output.
func DecodeHost(b []byte) (*HostRecord, error) {
	if len(b) == 0 || b[0] != hostFormatV1 {
		return nil, errors.New("host record: unknown format")
	}
	d := &hostReader{b: b[1:]}
	r := &HostRecord{Epoch: d.uvarint("epoch"), Round: d.uvarint("round")}
	r.Miner = d.field("miner", MaxPeerIDLen)
	r.Validator = d.field("validator", MaxPeerIDLen)
	r.Challenge = d.field("challenge", MaxHostChallengeLen)
	copy(r.Secret[:], d.fixed("secret", 32))
	r.RTTNanos, r.RootNanos = d.varint("rtt"), d.varint("root nanos")
	copy(r.Root[:], d.fixed("root", 32))
	r.Opening = d.field("opening", MaxHostOpeningLen)
	r.VerifyNanos = d.varint("verify nanos")
	if vm := d.fixed("verdict", 2); vm != nil {
		r.Verdict, r.Missed = Verdict(vm[0]), vm[1] == 1
		if vm[1] > 1 {
			d.fail("missed flag")
		}
	}
	r.Reason = string(d.field("reason", MaxReasonLen))
	switch {
	case d.err != nil:
		return nil, d.err
	case len(d.b) != 0:
		return nil, fmt.Errorf("host record: %d trailing bytes", len(d.b))
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("host record: %w", err)
	}
	return r, nil
}

func hostKey(epoch, round uint64, miner []byte) []byte {
	k := recordKey(epoch, round, miner)
	k[0] = hostTag
	return k
}

// PutHost stores a host record, never replacing one: a record already
// stored under its (epoch, round, miner) is an error wrapping ErrExists.
func (s *Store) PutHost(r *HostRecord) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("store: invalid host record: %w", err)
	}
	desc := "host " + describeKey(r.Epoch, r.Round, r.Miner)
	_, err := s.putNew(hostKey(r.Epoch, r.Round, r.Miner), EncodeHost(r), pebble.Sync, desc, func([]byte) error {
		return fmt.Errorf("%w: %s", ErrExists, desc)
	})
	return err
}

// HostRounds iterates over the host records of epochs fromEpoch..toEpoch
// inclusive, by epoch, round and miner; a value that does not decode, or
// names another key, is ErrCorrupt. An error is yielded once and ends the
// iteration.
func (s *Store) HostRounds(fromEpoch, toEpoch uint64) iter.Seq2[*HostRecord, error] {
	return scan(s, hostTag, fromEpoch, toEpoch, recordKeyMin, recordKeyMax, func(k, v []byte) (*HostRecord, error) {
		r, err := DecodeHost(v)
		if err == nil && string(hostKey(r.Epoch, r.Round, r.Miner)) != string(k) {
			err = fmt.Errorf("value is for %s", describeKey(r.Epoch, r.Round, r.Miner))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: host key %x: %v", ErrCorrupt, k, err)
		}
		return r, nil
	})
}
