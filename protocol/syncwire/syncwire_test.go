package syncwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
)

func TestSyncWireBounds(t *testing.T) {
	v := peer.ID("validator-id")
	req := EncodeRecordsRequest(v, 77, 5)
	if len(req) > MaxRequest {
		t.Fatalf("request of %d bytes over its bound %d", len(req), MaxRequest)
	}
	if gv, before, limit, err := DecodeRecordsRequest(req[1:]); err != nil || gv != v || before != 77 || limit != 5 {
		t.Fatalf("round trip: %q %d %d %v", gv, before, limit, err)
	}
	for _, bad := range [][]byte{nil, {0}, {65}, req[1 : len(req)-1], append(slices.Clone(req[1:]), 0),
		EncodeRecordsRequest(v, 1, 0)[1:], EncodeRecordsRequest(v, 1, MaxRecords+1)[1:]} {
		if _, _, _, err := DecodeRecordsRequest(bad); err == nil {
			t.Errorf("records request %x accepted", bad)
		}
	}
	hs := []Head{{Validator: "a", Epoch: 3, ID: [32]byte{1}}, {Validator: "bb", Epoch: 9, ID: [32]byte{2}}}
	enc := EncodeHeads(hs)
	if got, err := DecodeHeads(enc); err != nil || !slices.Equal(got, hs) {
		t.Fatalf("heads round trip: %v %v", got, err)
	}
	tooMany := binary.BigEndian.AppendUint32(nil, MaxHeads+1)
	for _, bad := range [][]byte{nil, enc[:3], enc[:len(enc)-1], append(slices.Clone(enc), 0), tooMany, {0, 0, 0, 1, 0}} {
		if _, err := DecodeHeads(bad); err == nil {
			t.Errorf("heads %x accepted", bad)
		}
	}
	if full := make([]Head, MaxHeads); len(EncodeHeads(full)) > MaxHeadsFrame {
		t.Fatal("a full heads response exceeds its frame bound")
	}
}

// TestEvidenceFrames: requests and headers round-trip, and a request of
// another length or an unknown kind, or a header of another length, is
// refused.
func TestEvidenceFrames(t *testing.T) {
	req := EncodeEvidenceRequest(KindHosts, 7, 128)
	if len(req) != RequestLen {
		t.Fatalf("request of %d bytes, want %d", len(req), RequestLen)
	}
	if k, e, from, ok := DecodeEvidenceRequest(req); !ok || k != KindHosts || e != 7 || from != 128 {
		t.Fatalf("round trip: %d %d %d %v", k, e, from, ok)
	}
	for _, bad := range [][]byte{nil, req[:RequestLen-1], append(slices.Clone(req), 0), EncodeEvidenceRequest(0, 7, 0), EncodeEvidenceRequest(KindOffSchedule+1, 7, 0)} {
		if _, _, _, ok := DecodeEvidenceRequest(bad); ok {
			t.Errorf("request %x accepted", bad)
		}
	}
	hdr := EvidenceHeader(StatusPruned, 3, 9)
	if s, n, next, ok := ParseEvidenceHeader(hdr); !ok || s != StatusPruned || n != 3 || next != 9 {
		t.Fatalf("header round trip: %d %d %d %v", s, n, next, ok)
	}
	if _, _, _, ok := ParseEvidenceHeader(hdr[:HeaderLen-1]); ok {
		t.Error("a short header parsed")
	}
	if from, ok := DecodeProofsRequest(EncodeProofsRequest(42)); !ok || from != 42 {
		t.Fatalf("proofs request round trip: %d %v", from, ok)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := WriteList(w, [][]byte{{1}, {2, 3}}, 77); err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	h, err := protocol.ReadFrame(bufio.NewReader(&buf), ListHeaderLen)
	if n, next, ok := ParseListHeader(h); err != nil || !ok || n != 2 || next != 77 {
		t.Fatalf("list header %x: %d %d %v %v", h, n, next, ok, err)
	}
}
