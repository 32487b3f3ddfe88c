package commit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Limits on what a proof decoder accepts, checked before allocating.
const (
	// MaxIndices bounds how many tiles one batch proof opens.
	MaxIndices = 1 << 12
	// MaxProofCVs bounds the chaining values in one proof: 64 levels for
	// each of MaxIndices leaves.
	MaxProofCVs = MaxIndices * 64
)

// Proof is a batch inclusion proof: the chaining values of the maximal
// subtrees that hold no opened leaf, in depth-first, left-to-right order.
// A one-tile inclusion proof is the batch proof for one index.
type Proof []CV

// Prove returns the proof that opens the leaves at indices, which must be
// strictly increasing and in range.
func Prove(leaves []CV, indices []uint64) (Proof, error) {
	if err := checkIndices(uint64(len(leaves)), indices); err != nil {
		return nil, err
	}
	var p Proof
	var walk func(lo, hi uint64, idx []uint64)
	walk = func(lo, hi uint64, idx []uint64) {
		if len(idx) == 0 {
			p = append(p, wordsToCV(subtree(leaves[lo:hi])))
			return
		}
		if hi-lo == 1 {
			return
		}
		mid := lo + leftSize(hi-lo)
		split, _ := slices.BinarySearch(idx, mid)
		walk(lo, mid, idx[:split])
		walk(mid, hi, idx[split:])
	}
	walk(0, uint64(len(leaves)), indices)
	return p, nil
}

// ProofLen is the number of chaining values a valid proof for indices in a
// tree of numLeaves has; it lets a verifier reject a wrong-length proof
// before hashing anything.
func ProofLen(numLeaves uint64, indices []uint64) (int, error) {
	if err := checkIndices(numLeaves, indices); err != nil {
		return 0, err
	}
	var walk func(lo, hi uint64, idx []uint64) int
	walk = func(lo, hi uint64, idx []uint64) int {
		switch {
		case len(idx) == 0:
			return 1
		case hi-lo == 1:
			return 0
		}
		mid := lo + leftSize(hi-lo)
		split, _ := slices.BinarySearch(idx, mid)
		return walk(lo, mid, idx[:split]) + walk(mid, hi, idx[split:])
	}
	return walk(0, numLeaves, indices), nil
}

// Errors returned by Verify; wrapped with detail.
var (
	ErrProofLength  = errors.New("proof has the wrong number of chaining values")
	ErrRootMismatch = errors.New("tiles and proof do not hash to the committed root")
)

// Verify checks that leaves are the chaining values at indices of the tree
// with numLeaves leaves and the given root.
func Verify(root CV, numLeaves uint64, indices []uint64, leaves []CV, p Proof) error {
	if len(leaves) != len(indices) {
		return fmt.Errorf("%d leaves for %d indices", len(leaves), len(indices))
	}
	want, err := ProofLen(numLeaves, indices)
	if err != nil {
		return err
	}
	if len(p) != want {
		return fmt.Errorf("%w: got %d, want %d for %d tiles of %d", ErrProofLength, len(p), want, len(indices), numLeaves)
	}
	next, leaf := 0, 0
	var walk func(lo, hi uint64, idx []uint64) [8]uint32
	walk = func(lo, hi uint64, idx []uint64) [8]uint32 {
		if len(idx) == 0 {
			next++
			return cvToWords(p[next-1])
		}
		if hi-lo == 1 {
			leaf++
			return cvToWords(leaves[leaf-1])
		}
		mid := lo + leftSize(hi-lo)
		split, _ := slices.BinarySearch(idx, mid)
		l := walk(lo, mid, idx[:split])
		r := walk(mid, hi, idx[split:])
		return parentCV(l, r)
	}
	mid := leftSize(numLeaves)
	split, _ := slices.BinarySearch(indices, mid)
	l := walk(0, mid, indices[:split])
	r := walk(mid, numLeaves, indices[split:])
	if parentRoot(l, r) != root {
		return ErrRootMismatch
	}
	return nil
}

func checkIndices(numLeaves uint64, indices []uint64) error {
	switch {
	case numLeaves < 2:
		return fmt.Errorf("tree of %d leaves: need at least 2", numLeaves)
	case len(indices) == 0:
		return errors.New("no indices to open")
	case len(indices) > MaxIndices:
		return fmt.Errorf("%d indices: at most %d", len(indices), MaxIndices)
	}
	for i, x := range indices {
		if x >= numLeaves {
			return fmt.Errorf("index %d out of range for %d tiles", x, numLeaves)
		}
		if i > 0 && x <= indices[i-1] {
			return fmt.Errorf("indices not strictly increasing at position %d (%d after %d)", i, x, indices[i-1])
		}
	}
	return nil
}

// MarshalBinary encodes p as a big-endian uint32 count followed by the
// chaining values.
func (p Proof) MarshalBinary() ([]byte, error) {
	if len(p) > MaxProofCVs {
		return nil, fmt.Errorf("proof of %d values: at most %d", len(p), MaxProofCVs)
	}
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+32*len(p)), uint32(len(p)))
	for _, cv := range p {
		b = append(b, cv[:]...)
	}
	return b, nil
}

// DecodeProof parses MarshalBinary's encoding, rejecting oversized or
// truncated input and trailing bytes.
func DecodeProof(b []byte) (Proof, error) {
	if len(b) < 4 {
		return nil, errors.New("proof: truncated count")
	}
	n := binary.BigEndian.Uint32(b)
	if n > MaxProofCVs {
		return nil, fmt.Errorf("proof: %d values exceeds the limit of %d", n, MaxProofCVs)
	}
	if uint64(len(b)-4) != 32*uint64(n) {
		return nil, fmt.Errorf("proof: %d bytes of values, want %d", len(b)-4, 32*uint64(n))
	}
	p := make(Proof, n)
	for i := range p {
		copy(p[i][:], b[4+32*i:])
	}
	return p, nil
}

// MarshalIndices encodes strictly increasing tile indices as a big-endian
// uint32 count followed by big-endian uint64 values.
func MarshalIndices(idx []uint64) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+8*len(idx)), uint32(len(idx)))
	for _, x := range idx {
		b = binary.BigEndian.AppendUint64(b, x)
	}
	return b
}

// DecodeIndices parses MarshalIndices' encoding and checks the indices are
// strictly increasing and below numLeaves.
func DecodeIndices(b []byte, numLeaves uint64) ([]uint64, error) {
	if len(b) < 4 {
		return nil, errors.New("indices: truncated count")
	}
	n := binary.BigEndian.Uint32(b)
	if n == 0 || n > MaxIndices {
		return nil, fmt.Errorf("indices: count %d outside 1..%d", n, MaxIndices)
	}
	if uint64(len(b)-4) != 8*uint64(n) {
		return nil, fmt.Errorf("indices: %d bytes of values, want %d", len(b)-4, 8*uint64(n))
	}
	idx := make([]uint64, n)
	for i := range idx {
		idx[i] = binary.BigEndian.Uint64(b[4+8*i:])
	}
	if err := checkIndices(numLeaves, idx); err != nil {
		return nil, fmt.Errorf("indices: %w", err)
	}
	return idx, nil
}
