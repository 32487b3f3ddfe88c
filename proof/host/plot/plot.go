// Package plot is the storage host proof: a plot of seeded blocks bound to
// the miner's peer ID, each the last of a stack of layers of hash labels
// that costs far more to regenerate than to read from an SSD, even from a
// fraction of its labels kept, committed by the BLAKE3 hash
// of the plot file (its root, announced once the plot is built), and audited
// by W timed walks of dependent reads of random blocks.
//
// A walk step needs a whole block, so a miner that regenerates blocks, or
// fetches them over the network, pays the regeneration or the round trip per
// step and falls outside the validator's time bound. The validator checks a
// sampled segment from the blocks it read and their inclusion proofs against
// the root, and checks sampled blocks against their regeneration when the
// root is announced. It proves a read rate over a committed plot, not that
// the bytes are stored nowhere else (SPEC §23).
package plot

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"lukechampine.com/blake3/guts"
)

// Block size bounds (bytes, as a power of two: commit's tile bounds).
const (
	MinBlockLog = 10
	MaxBlockLog = 20
	// DefaultBlockLog is 64 KiB: one random read on an NVMe SSD takes
	// about as long as a 4 KiB one, while regeneration scales with size.
	DefaultBlockLog = 16
	LabelBytes      = 64
	MinRounds       = 1
	MaxRounds       = 1 << 12
	// DefaultRounds makes a 64 KiB block cost ≥ 10× an NVMe random read
	// to regenerate (BENCHMARKS.md measures it).
	DefaultRounds = 128
	// MaxBlocks bounds a plot: 2^32 blocks.
	MaxBlocks = 1 << 32
)

// StepBoundNs is the per-walk step time beyond which a plot earns less than
// full credit (host.Timing.Credit): twice a flash NVMe random read, a small
// fraction of a block's regeneration (SPEC §23.4).
const StepBoundNs = 200_000

// Plot describes a miner's plot.
type Plot struct {
	Miner    []byte // the miner's peer ID bytes
	BlockLog uint8  // blocks are 2^BlockLog bytes
	Rounds   uint32 // layers of 64-byte labels
	Blocks   uint64
}

// Validate checks the plot's bounds.
func (p *Plot) Validate() error {
	switch {
	case len(p.Miner) == 0 || len(p.Miner) > 255:
		return errors.New("plot: miner ID must be 1..255 bytes")
	case p.BlockLog < MinBlockLog || p.BlockLog > MaxBlockLog:
		return fmt.Errorf("plot block 2^%d bytes: want 2^%d..2^%d", p.BlockLog, MinBlockLog, MaxBlockLog)
	case p.Rounds < MinRounds || p.Rounds > MaxRounds:
		return fmt.Errorf("plot rounds %d: want %d..%d", p.Rounds, MinRounds, MaxRounds)
	case p.Blocks < 2 || p.Blocks > MaxBlocks:
		return fmt.Errorf("plot of %d blocks: want 2..%d", p.Blocks, uint64(MaxBlocks))
	}
	return nil
}

// BlockBytes is the size of one block.
func (p *Plot) BlockBytes() int { return 1 << p.BlockLog }

// Bytes is the plot's size.
func (p *Plot) Bytes() uint64 { return p.Blocks << p.BlockLog }

// Encode is the plot's canonical encoding: u8 len(miner) ‖ miner ‖ u8
// BlockLog ‖ BE32 rounds ‖ BE64 blocks.
func (p *Plot) Encode() []byte {
	b := append([]byte{byte(len(p.Miner))}, p.Miner...)
	b = binary.BigEndian.AppendUint32(append(b, p.BlockLog), p.Rounds)
	return binary.BigEndian.AppendUint64(b, p.Blocks)
}

// Generate writes block b into dst (BlockBytes long): the last of Rounds
// layers of n = BlockBytes/64 labels. With key = derive-key("… plot
// layered block", u8 len(miner) ‖ miner ‖ u8 BlockLog ‖ BE32 rounds ‖
// LE64(b)) and ℓ = the first 64 bytes of the XOF keyed by key, for each
// layer p and each label j in order:
//
//	P = LE64(j) ‖ 0^56                        (layer 0)
//	P = label j' of layer p−1, j' = LE64(ℓ[0:8]) mod n   (later layers)
//	ℓ = BLAKE3-keyed(key, ℓ ‖ (ℓ ⊕ P)), 64-byte output; label j of layer p = ℓ
//
// ℓ runs on from one layer into the next. Both compressions of a label
// need the previous one, so a layer is a sequential chain, and each of its
// labels needs a label of the whole previous layer picked by the chain
// itself: a miner keeping only some labels of a block recomputes, in every
// layer, the runs between them one after the other (SPEC §23.4 bounds the
// time it saves against the storage).
func (p *Plot) Generate(b uint64, dst []byte) {
	layers(p, b, func(int, []label) {}, dst)
}

// label is a 64-byte label as BLAKE3 message words.
type label = [16]uint32

// layers computes block b's layers into dst, calling each with the layer
// index and its labels as they complete.
func layers(p *Plot, b uint64, each func(int, []label), dst []byte) {
	key := blockKey(p, b)
	var k [8]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	var x [LabelBytes]byte
	host.Stream(key, x[:])
	l := guts.BytesToWords(x)
	n := len(dst) / LabelBytes
	prev, cur := make([]label, n), make([]label, n)
	for layer := range int(p.Rounds) {
		for j := range cur {
			var par label
			if layer == 0 {
				par[0], par[1] = uint32(j), uint32(uint64(j)>>32)
			} else {
				par = prev[(uint64(l[0])|uint64(l[1])<<32)&uint64(n-1)]
			}
			l = nextLabel(&k, l, par)
			cur[j] = l
		}
		each(layer, cur)
		prev, cur = cur, prev
	}
	for j, w := range prev {
		for i, v := range w {
			binary.LittleEndian.PutUint32(dst[j*LabelBytes+4*i:], v)
		}
	}
}

// nextLabel is BLAKE3-keyed(key, l ‖ (l ⊕ par)) with 64 bytes of output: two
// compressions, the first of l alone.
func nextLabel(key *[8]uint32, l, par label) label {
	cv := guts.ChainingValue(guts.Node{CV: *key, Block: l, BlockLen: guts.BlockSize,
		Flags: guts.FlagChunkStart | guts.FlagKeyedHash})
	for i := range par {
		par[i] ^= l[i]
	}
	return guts.CompressNode(guts.Node{CV: cv, Block: par, BlockLen: guts.BlockSize,
		Flags: guts.FlagChunkEnd | guts.FlagRoot | guts.FlagKeyedHash})
}

// blockKey is block b's key.
func blockKey(p *Plot, b uint64) [32]byte {
	id := append([]byte{byte(len(p.Miner))}, p.Miner...)
	id = binary.BigEndian.AppendUint32(append(id, p.BlockLog), p.Rounds)
	return host.Derive("plot layered block", id, host.LE64(b))
}

// Leaf is block b's leaf in the plot tree: its BLAKE3 subtree chaining value
// at its offset in the plot file (SPEC §6), so the root is b3sum of the file.
func (p *Plot) Leaf(b uint64, block []byte) commit.CV { return commit.TileCV(block, b) }

// Regenerator serves a plot's blocks by regenerating each one when it is
// read: what a miner that stores nothing does. Its walks give the same
// checkpoints as the stored plot's, only later.
type Regenerator struct{ Plot *Plot }

// ReadBlock regenerates block b into dst.
func (r Regenerator) ReadBlock(b uint64, dst []byte) error {
	if b >= r.Plot.Blocks || len(dst) != r.Plot.BlockBytes() {
		return errors.New("plot read out of range")
	}
	r.Plot.Generate(b, dst)
	return nil
}
