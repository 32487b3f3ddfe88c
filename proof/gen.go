package proof

import (
	"encoding/binary"
	"sync"
)

// Matrix names an input matrix in the generator's counter.
type Matrix uint32

// The two input matrices.
const (
	MatA Matrix = 0
	MatB Matrix = 1
)

// Generator produces challenge matrices one line at a time: a row of A or a
// column of B, each an independent Philox stream, so a verifier generates only
// the lines a sampled tile needs.
type Generator struct {
	key  [2]uint32
	salt uint32
	vals valueSet
	k    uint32
}

// NewGenerator derives the generator of p's matrices.
func NewGenerator(p Params) (*Generator, error) {
	key, err := p.Key()
	if err != nil {
		return nil, err
	}
	return &Generator{
		key:  [2]uint32{binary.LittleEndian.Uint32(key[0:]), binary.LittleEndian.Uint32(key[4:])},
		salt: binary.LittleEndian.Uint32(key[8:]),
		vals: p.Precision.values(),
		k:    p.K,
	}, nil
}

// Stream returns the Philox key and the salt (counter word 3) of g's lines,
// for generators outside Go (the CUDA kernels) that must match Line bit for
// bit.
func (g *Generator) Stream() (key [2]uint32, salt uint32) { return g.key, g.salt }

// LineValues is the value set of matrix m's entries: each 16-bit draw w maps
// to scale·(w & mask) − off. GPU generators use it to match Line.
func (p Precision) LineValues(m Matrix) (mask uint32, off, scale int32) {
	v := p.values()
	if m == MatB {
		return v.bMask, v.bOff, v.bScale
	}
	return v.aMask, v.aOff, 1
}

// Number is an element type lines can be generated into.
type Number interface {
	~int16 | ~int32 | ~int64 | ~float32
}

// Line fills dst[:K] with line idx of matrix m in batch b: row idx of A, or
// column idx of B. Element p of the line comes from bits 16·(p mod 2) of word
// (p mod 8)/2 of the Philox block at counter (p/8, idx, 2b+m, salt).
func Line[T Number](g *Generator, m Matrix, b, idx uint32, dst []T) {
	dst = dst[:g.k]
	mask, off, scale := g.vals.aMask, g.vals.aOff, int32(1)
	if m == MatB {
		mask, off, scale = g.vals.bMask, g.vals.bOff, g.vals.bScale
	}
	blocks := activeKernel().blocks
	// Pooled: passed to a kernel through a func value, a local array
	// escapes, and a short line's 1 KiB allocation cost more than the line.
	pw := lineWords.Get().(*[lineChunk * 4]uint32)
	defer lineWords.Put(pw)
	w := pw[:]
	for p := 0; p < len(dst); p += 8 * lineChunk {
		blocks(w[:], [4]uint32{uint32(p / 8), idx, b<<1 | uint32(m), g.salt}, g.key)
		d := dst[p:min(p+8*lineChunk, len(dst))]
		l := 0
		for ; l+8 <= len(d); l += 8 {
			x, e := w[l/2:l/2+4:l/2+4], d[l:l+8:l+8]
			e[0], e[1] = T(scale*int32(x[0]&mask)-off), T(scale*int32(x[0]>>16&mask)-off)
			e[2], e[3] = T(scale*int32(x[1]&mask)-off), T(scale*int32(x[1]>>16&mask)-off)
			e[4], e[5] = T(scale*int32(x[2]&mask)-off), T(scale*int32(x[2]>>16&mask)-off)
			e[6], e[7] = T(scale*int32(x[3]&mask)-off), T(scale*int32(x[3]>>16&mask)-off)
		}
		for ; l < len(d); l++ {
			d[l] = T(scale*int32(w[l/2]>>(16*(l%2))&mask) - off)
		}
	}
}

// lineChunk is how many Philox blocks Line generates per kernel call.
const lineChunk = 64

var lineWords = sync.Pool{New: func() any { return new([lineChunk * 4]uint32) }}
