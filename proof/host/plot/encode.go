package plot

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// MarshalBinary encodes op as BE32 length ‖ the checkpoint opening (package
// host's encoding) ‖ BE32 n ‖ n × BE64 block index ‖ n blocks ‖ the block
// proof in commit's encoding.
func (op *Opening) MarshalBinary() ([]byte, error) {
	if len(op.Indices) != len(op.Blocks) || len(op.Indices) > MaxOpenBlocks {
		return nil, fmt.Errorf("opening of %d blocks for %d indices: at most %d", len(op.Blocks), len(op.Indices), MaxOpenBlocks)
	}
	cp, err := op.Checkpoints.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(cp)))
	b = binary.BigEndian.AppendUint32(append(b, cp...), uint32(len(op.Indices)))
	for _, i := range op.Indices {
		b = binary.BigEndian.AppendUint64(b, i)
	}
	for _, blk := range op.Blocks {
		b = append(b, blk...)
	}
	p, err := op.Proof.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(b, p...), nil
}

// DecodeOpening parses MarshalBinary's encoding of blocks of 2^blockLog
// bytes, checking every count against its bound before allocating and
// rejecting trailing bytes.
func DecodeOpening(b []byte, blockLog uint8) (*Opening, error) {
	if blockLog < MinBlockLog || blockLog > MaxBlockLog {
		return nil, fmt.Errorf("plot opening: block size 2^%d out of range", blockLog)
	}
	if len(b) < 4 {
		return nil, errors.New("plot opening: truncated")
	}
	n := uint64(binary.BigEndian.Uint32(b))
	if n > uint64(len(b)-4) {
		return nil, fmt.Errorf("plot opening: checkpoint opening of %d bytes, %d left", n, len(b)-4)
	}
	cp, err := host.DecodeOpening(b[4:4+n], StateBytes)
	if err != nil {
		return nil, fmt.Errorf("plot opening: %w", err)
	}
	b = b[4+n:]
	if len(b) < 4 {
		return nil, errors.New("plot opening: truncated block count")
	}
	k := uint64(binary.BigEndian.Uint32(b))
	bs := uint64(1) << blockLog
	if k > MaxOpenBlocks || k*bs > MaxOpenBytes {
		return nil, fmt.Errorf("plot opening: %d blocks of %d bytes exceeds the limit", k, bs)
	}
	b = b[4:]
	if uint64(len(b)) < k*(8+bs) {
		return nil, fmt.Errorf("plot opening: %d bytes for %d blocks", len(b), k)
	}
	op := &Opening{Checkpoints: *cp, Indices: make([]uint64, k), Blocks: make([][]byte, k)}
	for i := range op.Indices {
		op.Indices[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	b = b[8*k:]
	for i := range op.Blocks {
		op.Blocks[i] = append([]byte(nil), b[:bs]...)
		b = b[bs:]
	}
	if op.Proof, err = commit.DecodeProof(b); err != nil {
		return nil, fmt.Errorf("plot opening: %w", err)
	}
	return op, nil
}
