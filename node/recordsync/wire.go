package recordsync

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/store"
)

// The record sync protocol's requests and heads response (SPEC §22).

func encodeRecordsRequest(v peer.ID, before uint64, limit int) []byte {
	b := append([]byte{syncRecords, byte(len(v))}, v...)
	b = binary.BigEndian.AppendUint64(b, before)
	return append(b, byte(limit))
}

// decodeRecordsRequest parses a records request (after its type byte).
func decodeRecordsRequest(b []byte) (v peer.ID, before uint64, limit int, err error) {
	if len(b) < 1 || int(b[0]) < 1 || int(b[0]) > store.MaxPeerIDLen || len(b) != 1+int(b[0])+8+1 {
		return "", 0, 0, errors.New("malformed records request")
	}
	n := int(b[0])
	v = peer.ID(b[1 : 1+n])
	before = binary.BigEndian.Uint64(b[1+n:])
	limit = int(b[1+n+8])
	if limit < 1 || limit > maxSyncRecords {
		return "", 0, 0, fmt.Errorf("records request limit %d, want 1..%d", limit, maxSyncRecords)
	}
	return v, before, limit, nil
}

func encodeHeads(hs []head) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(hs)))
	for _, h := range hs {
		b = append(append(b, byte(len(h.validator))), h.validator...)
		b = binary.BigEndian.AppendUint64(b, h.epoch)
		b = append(b, h.id[:]...)
	}
	return b
}

func decodeHeads(b []byte) ([]head, error) {
	if len(b) < 4 {
		return nil, errors.New("heads: truncated count")
	}
	n := binary.BigEndian.Uint32(b)
	if n > maxSyncHeads {
		return nil, fmt.Errorf("heads: %d entries, at most %d", n, maxSyncHeads)
	}
	b = b[4:]
	out := make([]head, 0, n)
	for range n {
		if len(b) < 1 || int(b[0]) < 1 || int(b[0]) > store.MaxPeerIDLen || len(b) < 1+int(b[0])+8+32 {
			return nil, errors.New("heads: malformed entry")
		}
		l := int(b[0])
		h := head{validator: peer.ID(b[1 : 1+l]), epoch: binary.BigEndian.Uint64(b[1+l:])}
		copy(h.id[:], b[1+l+8:])
		out = append(out, h)
		b = b[1+l+8+32:]
	}
	if len(b) != 0 {
		return nil, errors.New("heads: trailing bytes")
	}
	return out, nil
}

// writeList writes a list response: a header (BE32 count ‖ BE64 next,
// readListHeader's) and one frame per item. next is where the scan
// stopped, the client continuing from it; 0 when nothing follows.
func writeList(w *bufio.Writer, items [][]byte, next uint64) error {
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

// readListHeader reads a list response's header: the item count and where
// the peer's scan stopped.
func readListHeader(r *bufio.Reader, kind string) (n uint32, next uint64, err error) {
	hdr, err := readFrame(r, 12)
	if err != nil {
		return 0, 0, err
	}
	if len(hdr) != 12 {
		return 0, 0, badPeer("%s header of %d bytes", kind, len(hdr))
	}
	return binary.BigEndian.Uint32(hdr), binary.BigEndian.Uint64(hdr[4:]), nil
}
