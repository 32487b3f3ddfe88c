// Package host holds what the three host proofs (cpuwork, memwalk, plot)
// share: seeded derivations, the shape of a checkpointed computation, the
// BLAKE3 tree over its checkpoints and the opening of sampled segments.
//
// Each proof runs C independent chains of N dependent steps and records the
// chain's state every S steps. Checkpoint j of chain c (the state after
// segment j, steps j·S … (j+1)·S−1) is leaf c·(N/S)+j of a tree built exactly
// as the tile tree of proof/commit, so roots and inclusion proofs are the
// ones SPEC §6–§7 already define. A validator samples segments after the
// root is committed and recomputes each from its start state (the previous
// checkpoint, or the chain's seeded initial state) to its committed end.
// Everything here is deterministic and free of I/O.
package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"lukechampine.com/blake3"
)

// contextPrefix versions every BLAKE3 derive-key context of the host proofs.
const contextPrefix = "pog 2026-12-01 host "

// Stream fills dst with the BLAKE3 XOF output of the empty message keyed by
// key: the seeded bytes of tables, caches and walk starts.
func Stream(key [32]byte, dst []byte) {
	blake3.New(32, key[:]).XOF().Read(dst)
}

// LE64 is the 8-byte little-endian encoding of x.
func LE64(x uint64) []byte { return binary.LittleEndian.AppendUint64(nil, x) }

// Bounds every proof's shape is checked against before any allocation.
const (
	// MaxLeaves bounds the checkpoint tree.
	MaxLeaves = 1 << 20
	// MaxSegments bounds how many segments one opening carries.
	MaxSegments = 256
	// MaxStateBytes bounds one chain state.
	MaxStateBytes = 128
)

// Shape is the layout of a checkpointed computation: Chains chains of Steps
// steps each, checkpointed every Segment steps.
type Shape struct {
	Chains  uint64
	Steps   uint64
	Segment uint64
}

// Check reports whether the shape is usable: whole segments, at least two
// checkpoints and at most MaxLeaves.
func (s Shape) Check() error {
	switch {
	case s.Chains == 0 || s.Steps == 0 || s.Segment == 0:
		return fmt.Errorf("shape %d chains × %d steps / %d: all must be positive", s.Chains, s.Steps, s.Segment)
	case s.Steps%s.Segment != 0:
		return fmt.Errorf("%d steps is not a whole number of %d-step segments", s.Steps, s.Segment)
	case s.Steps/s.Segment > MaxLeaves || s.Chains > MaxLeaves/(s.Steps/s.Segment):
		return fmt.Errorf("%d chains × %d segments: more than %d checkpoints", s.Chains, s.Steps/s.Segment, MaxLeaves)
	case s.Chains*(s.Steps/s.Segment) < 2:
		return errors.New("need at least two checkpoints")
	}
	return nil
}

// PerChain is the number of segments (and checkpoints) of one chain.
func (s Shape) PerChain() uint64 { return s.Steps / s.Segment }

// Leaves is the number of checkpoints: one per segment.
func (s Shape) Leaves() uint64 { return s.Chains * s.PerChain() }

// Locate returns the chain of segment seg and its position in the chain.
func (s Shape) Locate(seg uint64) (chain, pos uint64) {
	return seg / s.PerChain(), seg % s.PerChain()
}

// Leaf is checkpoint index's leaf: BLAKE3 derive-key over tag ‖ LE64(index)
// ‖ state. tag names the proof, so a checkpoint of one proof is never a
// checkpoint of another.
func Leaf(tag string, index uint64, state []byte) commit.CV {
	return commit.CV(Derive(tag+" checkpoint", LE64(index), state))
}

// Commit returns the checkpoint tree's root over states (one per leaf, in
// leaf order). The leaves are hashed on every CPU, since the commitment
// is inside the validator's timing.
func Commit(tag string, states [][]byte) (commit.CV, []commit.CV, error) {
	leaves := make([]commit.CV, len(states))
	w := min(runtime.GOMAXPROCS(0), max(1, len(states)/commitChunk))
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			for i := k * len(states) / w; i < (k+1)*len(states)/w; i++ {
				leaves[i] = Leaf(tag, uint64(i), states[i])
			}
		})
	}
	wg.Wait()
	root, err := commit.Root(leaves)
	return root, leaves, err
}

// commitChunk is the fewest leaves worth a goroutine.
const commitChunk = 256

// Needed returns the checkpoint indices an opening of the sampled segments
// must carry, ascending: each segment's end and, unless the segment starts
// its chain, its start.
func (s Shape) Needed(segs []uint64) []uint64 {
	var out []uint64
	for _, g := range segs {
		if _, pos := s.Locate(g); pos > 0 && (len(out) == 0 || out[len(out)-1] < g-1) {
			out = append(out, g-1)
		}
		if len(out) == 0 || out[len(out)-1] < g {
			out = append(out, g)
		}
	}
	return out
}

// Opening is a miner's answer to a sample: the states of the checkpoints
// Needed lists, in that order, and their batch inclusion proof.
type Opening struct {
	States [][]byte
	Proof  commit.Proof
}

// Open answers a sample of strictly increasing segment indices from the
// committed states and leaves.
func Open(s Shape, states [][]byte, leaves []commit.CV, segs []uint64) (*Opening, error) {
	if err := s.checkSample(segs); err != nil {
		return nil, err
	}
	idx := s.Needed(segs)
	p, err := commit.Prove(leaves, idx)
	if err != nil {
		return nil, err
	}
	op := &Opening{Proof: p}
	for _, i := range idx {
		op.States = append(op.States, states[i])
	}
	return op, nil
}

func (s Shape) checkSample(segs []uint64) error {
	if len(segs) == 0 || len(segs) > MaxSegments {
		return fmt.Errorf("%d sampled segments: want 1..%d", len(segs), MaxSegments)
	}
	for i, g := range segs {
		if g >= s.Leaves() || (i > 0 && g <= segs[i-1]) {
			return fmt.Errorf("sampled segments must be strictly increasing and below %d", s.Leaves())
		}
	}
	return nil
}

// ErrCheckpoint is wrapped by every verdict that rejects a committed
// checkpoint: its inclusion, its size or its recomputation.
var ErrCheckpoint = errors.New("checkpoint")

// CheckOpening verifies op against root for the sampled segments and
// returns the checkpoint states by index. Every state must be stateBytes
// long.
func CheckOpening(tag string, s Shape, root commit.CV, segs []uint64, op *Opening, stateBytes int) (map[uint64][]byte, error) {
	if err := s.checkSample(segs); err != nil {
		return nil, err
	}
	idx := s.Needed(segs)
	if len(op.States) != len(idx) {
		return nil, fmt.Errorf("%w: opening has %d states, the sample needs %d", ErrCheckpoint, len(op.States), len(idx))
	}
	got := make(map[uint64][]byte, len(idx))
	leaves := make([]commit.CV, len(idx))
	for k, i := range idx {
		if len(op.States[k]) != stateBytes {
			return nil, fmt.Errorf("%w %d: %d bytes, want %d", ErrCheckpoint, i, len(op.States[k]), stateBytes)
		}
		got[i] = op.States[k]
		leaves[k] = Leaf(tag, i, op.States[k])
	}
	if err := commit.Verify(root, s.Leaves(), idx, leaves, op.Proof); err != nil {
		return nil, fmt.Errorf("%w inclusion: %w", ErrCheckpoint, err)
	}
	return got, nil
}

// Sample derives k distinct segment indices, ascending, from the validator's
// revealed secret, the miner's checkpoint root and the challenge encoding
// (proof/sample's derivation, SPEC §8.3).
func Sample(secret [32]byte, root commit.CV, challenge []byte, s Shape, k int) []uint64 {
	return sample.Indices(secret, root, challenge, s.Leaves(), min(k, MaxSegments))
}
