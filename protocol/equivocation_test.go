package protocol

import (
	"bytes"
	"errors"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/pog-network/pog/protocol/pb"
)

func sealRecord(t *testing.T, key crypto.PrivKey, epoch uint64, root byte) []byte {
	t.Helper()
	rec := &pb.EpochRecord{Version: Version, Epoch: epoch, RoundsRoot: bytes.Repeat([]byte{root}, 32),
		ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)}
	raw, err := Seal(key, rec)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestEquivocationProofs(t *testing.T) {
	key, author := newKey(t)
	other, _ := newKey(t)
	r1, r2 := sealRecord(t, key, 7, 1), sealRecord(t, key, 7, 2)
	tamper := bytes.Clone(r2)
	tamper[len(tamper)-1] ^= 1 // the signature's last byte
	challenge, _ := Seal(key, challengeFor(t, author, 1))
	cases := []struct {
		name string
		x, y []byte
		ok   bool
	}{
		{"two records, one epoch", r1, r2, true},
		{"same pair, other order", r2, r1, true},
		{"the same record twice", r1, r1, false},
		{"another epoch", r1, sealRecord(t, key, 8, 2), false},
		{"another validator", r1, sealRecord(t, other, 7, 2), false},
		{"a bad signature", r1, tamper, false},
		{"not an epoch record", r1, challenge, false},
		{"empty", r1, nil, false},
	}
	for _, c := range cases {
		p, err := NewEquivocationProof(c.x, c.y)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if !c.ok {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrWrongType) && !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: error %v wraps none of the protocol errors", c.name, err)
			}
			continue
		}
		e, err := CheckEquivocation(p)
		if err != nil || e.Validator != author || e.Epoch != 7 {
			t.Fatalf("%s: check: %v %+v", c.name, err, e)
		}
		// The proof is canonical: both orders give the same bytes, and a
		// reordered proof is refused.
		q, _ := NewEquivocationProof(c.y, c.x)
		if !bytes.Equal(p.RecordA, q.RecordA) {
			t.Errorf("%s: proof depends on argument order", c.name)
		}
		if _, err := CheckEquivocation(&pb.EquivocationProof{Version: Version, RecordA: p.RecordB, RecordB: p.RecordA}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: swapped proof: %v", c.name, err)
		}
		// It travels in an envelope like every message.
		raw, err := Seal(other, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(raw, pb.MessageType_EQUIVOCATION_PROOF); err != nil {
			t.Errorf("%s: sealed proof: %v", c.name, err)
		}
	}
	if _, err := CheckEquivocation(&pb.EquivocationProof{Version: 2, RecordA: r1, RecordB: r2}); !errors.Is(err, ErrInvalid) {
		t.Errorf("version 2: %v", err)
	}
}
