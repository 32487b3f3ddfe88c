package host

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pog-network/pog/proof/commit"
)

// MarshalBinary encodes op as BE32 count ‖ count states ‖ the batch proof in
// commit's encoding (BE32 count ‖ 32-byte chaining values).
func (op *Opening) MarshalBinary() ([]byte, error) {
	if len(op.States) > 2*MaxSegments {
		return nil, fmt.Errorf("opening of %d states: at most %d", len(op.States), 2*MaxSegments)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(op.States)))
	for _, st := range op.States {
		b = append(b, st...)
	}
	p, err := op.Proof.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(b, p...), nil
}

// DecodeOpening parses MarshalBinary's encoding of states of stateBytes
// each, checking counts before allocating and rejecting trailing bytes.
func DecodeOpening(b []byte, stateBytes int) (*Opening, error) {
	if stateBytes <= 0 || stateBytes > MaxStateBytes {
		return nil, fmt.Errorf("opening: state size %d outside 1..%d", stateBytes, MaxStateBytes)
	}
	if len(b) < 4 {
		return nil, errors.New("opening: truncated count")
	}
	n := binary.BigEndian.Uint32(b)
	if n > 2*MaxSegments {
		return nil, fmt.Errorf("opening: %d states exceeds the limit of %d", n, 2*MaxSegments)
	}
	b = b[4:]
	if uint64(len(b)) < uint64(n)*uint64(stateBytes) {
		return nil, fmt.Errorf("opening: %d bytes for %d states of %d", len(b), n, stateBytes)
	}
	op := &Opening{States: make([][]byte, n)}
	for i := range op.States {
		op.States[i] = append([]byte(nil), b[:stateBytes]...)
		b = b[stateBytes:]
	}
	p, err := commit.DecodeProof(b)
	if err != nil {
		return nil, fmt.Errorf("opening: %w", err)
	}
	op.Proof = p
	return op, nil
}
