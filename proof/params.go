package proof

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/pog-network/pog/internal/kdf"
)

// Precision is a challenge's precision class: the input format a miner's
// hardware is measured in. Both classes use integer values chosen so that
// fp32 accumulation is exact (SPEC.md §Exactness).
type Precision uint8

// Precision classes. The zero value is invalid.
const (
	FP16 Precision = 1 // fp16 inputs, fp32 accumulation (tensor cores)
	FP32 Precision = 2 // fp32 inputs and accumulation
)

func (p Precision) String() string {
	switch p {
	case FP16:
		return "fp16"
	case FP32:
		return "fp32"
	}
	return fmt.Sprintf("precision(%d)", uint8(p))
}

// ParsePrecision maps "fp16" or "fp32" to its class.
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "fp16":
		return FP16, nil
	case "fp32":
		return FP32, nil
	}
	return 0, fmt.Errorf("unknown precision %q (want fp16 or fp32)", s)
}

// valueSet is the integer range of A and B entries of a precision class.
type valueSet struct {
	aMask, bMask uint32 // raw 16-bit draw is masked, then offset
	aOff, bOff   int32
	bScale       int32 // B = scale*(raw&mask) - off
}

func (p Precision) values() valueSet {
	if p == FP32 {
		// A needs 13 bits, beyond TF32's, fp16's and bf16's significands;
		// B in {-1, +1} keeps K*4096 within 2^24.
		return valueSet{aMask: 8191, aOff: 4096, bMask: 1, bOff: 1, bScale: 2}
	}
	// A needs 9 bits (outside int8 and fp8), exact in fp16; B in [-8, 7].
	return valueSet{aMask: 511, aOff: 256, bMask: 15, bOff: 8, bScale: 1}
}

// MaxAbs returns the largest magnitude of an A entry and of a B entry.
func (p Precision) MaxAbs() (a, b int64) {
	v := p.values()
	return int64(v.aOff), int64(v.bOff)
}

// MaxK is the largest inner dimension for which every partial sum of the
// class is an integer of magnitude at most 2^24, hence exact in fp32.
func (p Precision) MaxK() uint32 {
	a, b := p.MaxAbs()
	return uint32((1 << 24) / (a * b))
}

// Bounds on challenge parameters; SPEC.md §Parameters explains each.
const (
	MinTile        = 16
	MaxTile        = 512
	MaxDim         = 1 << 20
	MaxBatch       = 1 << 16
	MaxMinerID     = 64
	MaxOutputBytes = 1 << 38
	Version        = 1
)

// Params fixes one challenge's computation: for each batch index b,
// C_b = A_b·B_b with A_b M×K and B_b K×N, output in Tile×Tile tiles.
type Params struct {
	Precision Precision
	Batch     uint32
	M, K, N   uint32
	Tile      uint32 // tile edge in elements; a tile is 4·Tile² bytes
	Nonce     [32]byte
	Miner     []byte // the miner's libp2p peer ID bytes
}

// Validate checks every bound; a Params that passes can be generated,
// computed and verified without overflow.
func (p Params) Validate() error {
	switch {
	case p.Precision != FP16 && p.Precision != FP32:
		return fmt.Errorf("precision %d: want fp16 (1) or fp32 (2)", p.Precision)
	case p.Tile < MinTile || p.Tile > MaxTile || bits.OnesCount32(p.Tile) != 1:
		return fmt.Errorf("tile edge %d: must be a power of two in [%d, %d]", p.Tile, MinTile, MaxTile)
	case p.Batch < 1 || p.Batch > MaxBatch:
		return fmt.Errorf("batch %d: must be in [1, %d]", p.Batch, MaxBatch)
	case p.M < p.Tile || p.M > MaxDim || p.M%p.Tile != 0:
		return fmt.Errorf("M=%d: must be a multiple of the tile edge %d, at most %d", p.M, p.Tile, MaxDim)
	case p.N < p.Tile || p.N > MaxDim || p.N%p.Tile != 0:
		return fmt.Errorf("N=%d: must be a multiple of the tile edge %d, at most %d", p.N, p.Tile, MaxDim)
	case p.K < 1 || p.K > p.Precision.MaxK():
		return fmt.Errorf("K=%d: %s exactness allows 1..%d", p.K, p.Precision, p.Precision.MaxK())
	case len(p.Miner) < 1 || len(p.Miner) > MaxMinerID:
		return fmt.Errorf("miner ID of %d bytes: want 1..%d", len(p.Miner), MaxMinerID)
	case p.Tiles() < 2:
		return fmt.Errorf("%d output tile: need at least 2", p.Tiles())
	case p.OutputBytes() > MaxOutputBytes:
		return fmt.Errorf("output of %d bytes exceeds %d", p.OutputBytes(), uint64(MaxOutputBytes))
	}
	return nil
}

// TileBytes is the serialised size of one tile.
func (p Params) TileBytes() int { return 4 * int(p.Tile) * int(p.Tile) }

// TilesPerMatrix is (M/Tile)·(N/Tile).
func (p Params) TilesPerMatrix() uint64 {
	return uint64(p.M/p.Tile) * uint64(p.N/p.Tile)
}

// Tiles is the number of output tiles, the leaves of the commitment.
func (p Params) Tiles() uint64 { return uint64(p.Batch) * p.TilesPerMatrix() }

// OutputBytes is the size of the serialised output.
func (p Params) OutputBytes() uint64 { return 4 * uint64(p.Batch) * uint64(p.M) * uint64(p.N) }

// FLOPs is the multiply-add work of the challenge, counted as 2·M·N·K per batch.
func (p Params) FLOPs() float64 {
	// The conversion rounds here, so a caller that sums FLOPs cannot have
	// the last product fused into its addition (round records carry the sum).
	return float64(2 * float64(p.Batch) * float64(p.M) * float64(p.N) * float64(p.K))
}

// TilePos locates tile index i: batch b, tile row I and tile column J.
func (p Params) TilePos(i uint64) (b, I, J uint32) {
	per, cols := p.TilesPerMatrix(), uint64(p.N/p.Tile)
	return uint32(i / per), uint32(i % per / cols), uint32(i % cols)
}

const encodedFixed = 1 + 1 + 5*4 + 32 + 1

// MaxEncodedParams bounds an encoded Params.
const MaxEncodedParams = encodedFixed + MaxMinerID

// MarshalBinary returns the canonical encoding: version, precision, batch, M,
// K, N, tile (big-endian uint32), nonce, miner ID length and bytes.
func (p Params) MarshalBinary() ([]byte, error) {
	if len(p.Miner) > MaxMinerID {
		return nil, fmt.Errorf("miner ID of %d bytes: at most %d", len(p.Miner), MaxMinerID)
	}
	b := make([]byte, 0, encodedFixed+len(p.Miner))
	b = append(b, Version, byte(p.Precision))
	for _, v := range []uint32{p.Batch, p.M, p.K, p.N, p.Tile} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = append(b, p.Nonce[:]...)
	b = append(b, byte(len(p.Miner)))
	return append(b, p.Miner...), nil
}

// DecodeParams parses and validates the canonical encoding.
func DecodeParams(b []byte) (Params, error) {
	var p Params
	if len(b) < encodedFixed || len(b) > MaxEncodedParams {
		return p, fmt.Errorf("params: %d bytes, want %d..%d", len(b), encodedFixed, MaxEncodedParams)
	}
	if b[0] != Version {
		return p, fmt.Errorf("params: version %d, want %d", b[0], Version)
	}
	p.Precision = Precision(b[1])
	u := func(i int) uint32 { return binary.BigEndian.Uint32(b[2+4*i:]) }
	p.Batch, p.M, p.K, p.N, p.Tile = u(0), u(1), u(2), u(3), u(4)
	copy(p.Nonce[:], b[22:54])
	if n := int(b[54]); len(b) != encodedFixed+n {
		return p, fmt.Errorf("params: miner ID length %d does not match %d trailing bytes", n, len(b)-encodedFixed)
	}
	p.Miner = append([]byte(nil), b[encodedFixed:]...)
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("params: %w", err)
	}
	return p, nil
}

// KeyContext is the BLAKE3 derive-key context for generation keys; a new
// generator or value set must change it.
const KeyContext = "pog 2026-11-29 challenge matrices v1"

var keyKDF = kdf.New(KeyContext)

// Key derives the 32-byte generation key from the canonical encoding, so
// matrices differ for every nonce, miner and shape.
func (p Params) Key() ([32]byte, error) {
	if err := p.Validate(); err != nil {
		return [32]byte{}, err
	}
	enc, _ := p.MarshalBinary()
	return keyKDF.Sum(enc), nil
}
