// Package syncwire is the wire format of the two streams that carry
// stored records between nodes (SPEC §22): record sync (SyncProtocol),
// which walks validators' chains of epoch records and fetches equivocation
// proofs, and the evidence protocol (EvidenceProtocol), which serves a
// validator's evidence of an epoch. It holds the protocol IDs, the frames'
// encodings and their bounds, so neither side allocates for a hostile
// length; node/recordsync serves and fetches over them.
package syncwire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/record"
)

// SyncProtocol is the record sync stream protocol.
const SyncProtocol = "/pog/sync/1.0.0"

// Sync request types (the first byte of a request).
const (
	ReqHeads   byte = 1
	ReqRecords byte = 2
	ReqProofs  byte = 3
)

// Bounds of the sync protocol: a request is one small frame; a heads
// response one frame of at most MaxHeads entries; a records response a
// header and at most MaxRecords envelopes, each within the store's epoch
// record bound, and MaxRecordsBytes in all; a proofs
// response at most MaxProofs proofs and MaxProofsBytes.
const (
	MaxRequest      = 1 + 1 + record.MaxPeerIDLen + 8 + 1
	MaxHeads        = 1024
	MaxHeadsFrame   = 4 + MaxHeads*(1+record.MaxPeerIDLen+8+32)
	MaxRecords      = 16
	MaxRecordsBytes = 4 << 20
	// MaxProofs is the most proofs one response carries; an epoch with
	// more equivocators than that is served only its first MaxProofs.
	MaxProofs      = 16
	MaxProofsBytes = 8 << 20
	// ListHeaderLen is a records or proofs response's header: BE32 count
	// ‖ BE64 next.
	ListHeaderLen = 12
)

// Head is the latest record a node holds of one validator.
type Head struct {
	Validator peer.ID
	Epoch     uint64
	ID        [32]byte
}

// EncodeRecordsRequest asks for v's records below epoch before, at most
// limit of them.
func EncodeRecordsRequest(v peer.ID, before uint64, limit int) []byte {
	b := append([]byte{ReqRecords, byte(len(v))}, v...)
	b = binary.BigEndian.AppendUint64(b, before)
	return append(b, byte(limit))
}

// DecodeRecordsRequest parses a records request (after its type byte).
func DecodeRecordsRequest(b []byte) (v peer.ID, before uint64, limit int, err error) {
	if len(b) < 1 || int(b[0]) < 1 || int(b[0]) > record.MaxPeerIDLen || len(b) != 1+int(b[0])+8+1 {
		return "", 0, 0, errors.New("malformed records request")
	}
	n := int(b[0])
	v = peer.ID(b[1 : 1+n])
	before = binary.BigEndian.Uint64(b[1+n:])
	limit = int(b[1+n+8])
	if limit < 1 || limit > MaxRecords {
		return "", 0, 0, fmt.Errorf("records request limit %d, want 1..%d", limit, MaxRecords)
	}
	return v, before, limit, nil
}

// EncodeProofsRequest asks for the proofs of epochs from on.
func EncodeProofsRequest(from uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{ReqProofs}, from)
}

// DecodeProofsRequest parses a proofs request (its type byte included).
func DecodeProofsRequest(b []byte) (from uint64, ok bool) {
	if len(b) != 9 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[1:]), true
}

// EncodeHeads is a heads response: BE32 count, then per head its
// validator (length-prefixed), BE64 epoch and record ID.
func EncodeHeads(hs []Head) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(hs)))
	for _, h := range hs {
		b = append(append(b, byte(len(h.Validator))), h.Validator...)
		b = binary.BigEndian.AppendUint64(b, h.Epoch)
		b = append(b, h.ID[:]...)
	}
	return b
}

// DecodeHeads parses EncodeHeads' output, at most MaxHeads entries.
func DecodeHeads(b []byte) ([]Head, error) {
	if len(b) < 4 {
		return nil, errors.New("heads: truncated count")
	}
	n := binary.BigEndian.Uint32(b)
	if n > MaxHeads {
		return nil, fmt.Errorf("heads: %d entries, at most %d", n, MaxHeads)
	}
	b = b[4:]
	out := make([]Head, 0, n)
	for range n {
		if len(b) < 1 || int(b[0]) < 1 || int(b[0]) > record.MaxPeerIDLen || len(b) < 1+int(b[0])+8+32 {
			return nil, errors.New("heads: malformed entry")
		}
		l := int(b[0])
		h := Head{Validator: peer.ID(b[1 : 1+l]), Epoch: binary.BigEndian.Uint64(b[1+l:])}
		copy(h.ID[:], b[1+l+8:])
		out = append(out, h)
		b = b[1+l+8+32:]
	}
	if len(b) != 0 {
		return nil, errors.New("heads: trailing bytes")
	}
	return out, nil
}

// WriteList writes a records or proofs response: a header (BE32 count ‖
// BE64 next) and one frame per item. next is where the scan stopped, the
// client continuing from it; 0 when nothing follows.
func WriteList(w *bufio.Writer, items [][]byte, next uint64) error {
	hdr := binary.BigEndian.AppendUint32(nil, uint32(len(items)))
	if err := protocol.WriteFrame(w, binary.BigEndian.AppendUint64(hdr, next)); err != nil {
		return err
	}
	for _, b := range items {
		if err := protocol.WriteFrame(w, b); err != nil {
			return err
		}
	}
	return nil
}

// ParseListHeader parses a list response's header: the item count and
// where the peer's scan stopped.
func ParseListHeader(hdr []byte) (n uint32, next uint64, ok bool) {
	if len(hdr) != ListHeaderLen {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(hdr), binary.BigEndian.Uint64(hdr[4:]), true
}
