package syncwire

import "encoding/binary"

// EvidenceProtocol is the evidence stream protocol (SPEC §22.1): one
// request for a page of one kind of a validator's evidence of an epoch,
// answered by a header and the page's items.
const EvidenceProtocol = "/pog/evidence/1.0.0"

// Evidence request kinds.
const (
	KindRounds    byte = 1
	KindAnnounces byte = 2
	KindHosts     byte = 3 // host records (SPEC §23.8)
	// KindCheckpoint asks for the validator's scorer checkpoint of the
	// epoch (SPEC §21): what a public audit of its pruned evidence resumes
	// from.
	KindCheckpoint byte = 4
	// KindOffSchedule asks any node, validator or not, for the
	// challenges it refused as off schedule and kept (SPEC §16), received
	// in the epoch: each item BE64 receipt (Unix ns) ‖ the challenge
	// envelope.
	KindOffSchedule byte = 5
)

// Evidence response status.
const (
	StatusOK     byte = 0
	StatusNone   byte = 1 // this node is no validator: it keeps no round evidence
	StatusPruned byte = 2 // the epoch's evidence was pruned (SPEC §21)
)

// Bounds: a request is RequestLen bytes; a response is a header and at
// most MaxItems frames (round records of at most store.MaxRoundLen bytes,
// announces of at most store.MaxAnnounceLen), at most MaxBytes together
// unless its one record is larger. A client takes at most MaxEpochItems
// items of each kind and MaxEpochBytes in all for one epoch, so a peer
// that pages on forever is refused rather than followed.
const (
	RequestLen    = 1 + 8 + 4
	HeaderLen     = 1 + 4 + 4
	MaxItems      = 64
	MaxBytes      = 16 << 20
	MaxEpochItems = 1 << 18
	MaxEpochBytes = 1 << 30
)

// EncodeEvidenceRequest asks for the page of kind of epoch e starting at
// item from: kind ‖ BE64 epoch ‖ BE32 from.
func EncodeEvidenceRequest(kind byte, e uint64, from int) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64([]byte{kind}, e), uint32(from))
}

// DecodeEvidenceRequest parses EncodeEvidenceRequest's output.
func DecodeEvidenceRequest(b []byte) (kind byte, e uint64, from int, ok bool) {
	if len(b) != RequestLen || b[0] < KindRounds || b[0] > KindOffSchedule {
		return 0, 0, 0, false
	}
	return b[0], binary.BigEndian.Uint64(b[1:]), int(binary.BigEndian.Uint32(b[9:])), true
}

// EvidenceHeader is a page's header: status ‖ BE32 items ‖ BE32 next (the
// item the next page starts at, 0 if none).
func EvidenceHeader(status byte, items, next int) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{status}, uint32(items)), uint32(next))
}

// ParseEvidenceHeader parses EvidenceHeader's output.
func ParseEvidenceHeader(b []byte) (status byte, items uint32, next int, ok bool) {
	if len(b) != HeaderLen {
		return 0, 0, 0, false
	}
	return b[0], binary.BigEndian.Uint32(b[1:]), int(binary.BigEndian.Uint32(b[5:])), true
}
