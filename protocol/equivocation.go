package protocol

import (
	"bytes"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/pb"
)

// Equivocation is a checked proof that Validator signed two different
// epoch records for Epoch (SPEC.md §20).
type Equivocation struct {
	Validator peer.ID
	Epoch     uint64
	A, B      *Opened // the two records, A's ID first in byte order
}

// NewEquivocationProof builds the canonical proof from two epoch record
// envelopes in either order, checking that they prove equivocation.
func NewEquivocationProof(x, y []byte) (*pb.EquivocationProof, error) {
	p := &pb.EquivocationProof{Version: Version, RecordA: x, RecordB: y}
	ox, errx := Decode(x, pb.MessageType_EPOCH_RECORD)
	oy, erry := Decode(y, pb.MessageType_EPOCH_RECORD)
	if errx == nil && erry == nil {
		if ix, iy := ID(ox.Body), ID(oy.Body); bytes.Compare(ix[:], iy[:]) > 0 {
			p.RecordA, p.RecordB = y, x
		}
	}
	if _, err := CheckEquivocation(p); err != nil {
		return nil, err
	}
	return p, nil
}

// CheckEquivocation verifies a proof: both records open (signature and
// stateless rules), have one author and one epoch, differ, and come in
// canonical order. Every error wraps ErrInvalid, ErrTooLarge, ErrMalformed,
// ErrWrongType or ErrBadSignature.
func CheckEquivocation(p *pb.EquivocationProof) (*Equivocation, error) {
	if p.Version != Version {
		return nil, invalid("version %d, want %d", p.Version, Version)
	}
	a, err := Open(p.RecordA, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		return nil, fmt.Errorf("record a: %w", err)
	}
	b, err := Open(p.RecordB, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		return nil, fmt.Errorf("record b: %w", err)
	}
	ea, eb := a.Msg.(*pb.EpochRecord).Epoch, b.Msg.(*pb.EpochRecord).Epoch
	ia, ib := ID(a.Body), ID(b.Body)
	switch {
	case a.Author != b.Author:
		return nil, invalid("records signed by %s and %s", a.Author, b.Author)
	case ea != eb:
		return nil, invalid("records for epochs %d and %d", ea, eb)
	case ia == ib:
		return nil, invalid("the two records are the same record")
	case bytes.Compare(ia[:], ib[:]) > 0:
		return nil, invalid("records not in canonical order (record a's ID must sort first)")
	}
	return &Equivocation{Validator: a.Author, Epoch: ea, A: a, B: b}, nil
}
