package record

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Host is one validator's evidence of one host round (SPEC §23.8) with one
// miner. Round numbers are the validator's, shared with its round records.
type Host struct {
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
	hostFormatV1        = 1
)

// Validate checks the bounds and invariants every reader relies on.
func (r *Host) Validate() error {
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

// EncodeHost is a host record's canonical encoding, the bytes a store
// keeps and an epoch's evidence root hashes: format byte 1 ‖ varint epoch ‖
// varint round ‖ miner ‖ validator ‖ challenge ‖ secret(32) ‖ sint64 rtt ‖
// sint64 root_nanos ‖ root(32) ‖ opening ‖ sint64 verify_nanos ‖ verdict
// byte ‖ missed byte ‖ reason, each variable field as varint length ‖
// bytes. Unlike a round record it has no tags: every field is always
// present, in this order. r must be valid.
func EncodeHost(r *Host) []byte {
	b := []byte{hostFormatV1}
	b = protowire.AppendVarint(b, r.Epoch)
	b = protowire.AppendVarint(b, r.Round)
	for _, f := range [][]byte{r.Miner, r.Validator, r.Challenge} {
		b = protowire.AppendBytes(b, f)
	}
	b = append(b, r.Secret[:]...)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(r.RTTNanos))
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(r.RootNanos))
	b = append(b, r.Root[:]...)
	b = protowire.AppendBytes(b, r.Opening)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(r.VerifyNanos))
	missed := byte(0)
	if r.Missed {
		missed = 1
	}
	b = append(b, byte(r.Verdict), missed)
	return protowire.AppendBytes(b, []byte(r.Reason))
}

// hostReader reads EncodeHost's fields in order; the first error sticks
// and names its field.
type hostReader struct {
	d   reader
	err error
}

func (h *hostReader) fail(what string, err error) {
	if h.err == nil {
		h.err = fmt.Errorf("host record: %s: %w", what, err)
	}
}

// read returns f's value, or the zero value once a read has failed.
func read[T any](h *hostReader, what string, f func() (T, error)) T {
	var v T
	if h.err != nil {
		return v
	}
	v, err := f()
	if err != nil {
		h.fail(what, err)
	}
	return v
}

func (h *hostReader) uvarint(what string) uint64 { return read(h, what, h.d.rawVarint) }

func (h *hostReader) sint64(what string) int64 {
	return protowire.DecodeZigZag(h.uvarint(what))
}

func (h *hostReader) fixed(what string, n int) []byte {
	return read(h, what, func() ([]byte, error) { return h.d.fixed(n) })
}

// bytes reads a length-prefixed field of at most max bytes, copied (nil
// when empty).
func (h *hostReader) bytes(what string, max int) []byte {
	return read(h, what, func() ([]byte, error) {
		p, err := h.d.rawBytes(max)
		return append([]byte(nil), p...), err
	})
}

// DecodeHost parses and validates EncodeHost's output, refusing anything
// that would not re-encode to the same bytes.
func DecodeHost(b []byte) (*Host, error) {
	if len(b) == 0 || b[0] != hostFormatV1 {
		return nil, errors.New("host record: unknown format")
	}
	h := &hostReader{d: reader{b: b[1:]}}
	r := &Host{Epoch: h.uvarint("epoch"), Round: h.uvarint("round")}
	r.Miner = h.bytes("miner", MaxPeerIDLen)
	r.Validator = h.bytes("validator", MaxPeerIDLen)
	r.Challenge = h.bytes("challenge", MaxHostChallengeLen)
	copy(r.Secret[:], h.fixed("secret", 32))
	r.RTTNanos, r.RootNanos = h.sint64("rtt"), h.sint64("root nanos")
	copy(r.Root[:], h.fixed("root", 32))
	r.Opening = h.bytes("opening", MaxHostOpeningLen)
	r.VerifyNanos = h.sint64("verify nanos")
	if vm := h.fixed("verdict", 2); vm != nil {
		r.Verdict, r.Missed = Verdict(vm[0]), vm[1] == 1
		if vm[1] > 1 {
			h.fail("missed flag", fmt.Errorf("%d, want 0 or 1", vm[1]))
		}
	}
	r.Reason = string(h.bytes("reason", MaxReasonLen))
	switch {
	case h.err != nil:
		return nil, h.err
	case len(h.d.b) != 0:
		return nil, fmt.Errorf("host record: %d trailing bytes", len(h.d.b))
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("host record: %w", err)
	}
	return r, nil
}
