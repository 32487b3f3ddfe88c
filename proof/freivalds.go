package proof

import (
	"encoding/binary"
	"math/bits"

	"github.com/pog-network/pog/internal/kdf"
	"lukechampine.com/blake3"
)

// p61 is the Mersenne prime 2^61-1: Freivalds' check runs in its field, so a
// wrong tile passes with probability at most 1/p61 per tile.
const p61 = 1<<61 - 1

const freivaldsContext = "pog 2026-11-29 freivalds vector v1"

var freivaldsKDF = kdf.New(freivaldsContext)

// freivaldsVector derives tile idx's random vector from the secret and root,
// both fixed before the miner reveals tiles, so the check is reproducible.
func (t *Transcript) freivaldsVector(idx uint64) []uint64 {
	key := freivaldsKDF.Sum(t.Secret[:], t.Root[:], binary.BigEndian.AppendUint64(nil, idx))
	buf := make([]byte, 8*t.Params.Tile)
	blake3.New(32, key[:]).XOF().Read(buf)
	r := make([]uint64, t.Params.Tile)
	for i := range r {
		r[i] = reduce(0, binary.LittleEndian.Uint64(buf[8*i:])>>3)
	}
	return r
}

// reduce returns (hi·2^64 + lo) mod p61 for hi < 2^58.
func reduce(hi, lo uint64) uint64 {
	x := (lo & p61) + (lo >> 61) + hi<<3
	x = (x & p61) + (x >> 61)
	if x >= p61 {
		x -= p61
	}
	return x
}

// acc is a 128-bit accumulator of products of a non-negative integer below
// 2^33 and a field element, reduced once at the end.
type acc struct{ hi, lo uint64 }

func (a *acc) add(x, y uint64) {
	h, l := bits.Mul64(x, y)
	var c uint64
	a.lo, c = bits.Add64(a.lo, l, 0)
	a.hi += h + c
}

func (a acc) mod() uint64 { return reduce(a.hi, a.lo) }

func subMod(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a + p61 - b
}

// mulSmall returns x·y mod p61 for x < 2^32.
func mulSmall(x, y uint64) uint64 { return reduce(bits.Mul64(x, y)) }

// freivalds is one tile's check C·r = A_I·(B_J·r) over the field. Entries
// are offset to be non-negative (A by aOff, B by bOff, C by 2^31) and the
// offsets are subtracted once: the kernels accumulate only non-negative
// integers times field elements.
type freivalds struct {
	g       *Generator
	t, k    int
	b, I, J uint32
	v       valueSet
	c       []int32  // the tile, row-major
	r       []uint64 // the random vector, one field element per tile column
	bOffR   uint64   // bOff·Σr, subtracted from each entry of B_J·r
	cOffR   uint64   // 2^31·Σr, subtracted from each entry of C·r
	aOffY   uint64   // aOff·Σy, subtracted from each entry of A_I·y; set by setY
}

func newFreivalds(g *Generator, p Params, idx uint64, c []int32, r []uint64) *freivalds {
	b, I, J := p.TilePos(idx)
	f := &freivalds{g: g, t: int(p.Tile), k: int(p.K), b: b, I: I, J: J, v: p.Precision.values(), c: c, r: r}
	var rsum acc
	for _, x := range r {
		rsum.add(1, x)
	}
	rs := rsum.mod()
	f.bOffR = mulSmall(uint64(f.v.bOff), rs)
	f.cOffR = mulSmall(1<<31, rs)
	return f
}

// setY records Σ_q y_q for the A-side offset.
func (f *freivalds) setY(ysum uint64) { f.aOffY = mulSmall(uint64(f.v.aOff), ysum) }

// rowOK reports whether row i of C·r equals right, row i of
// (A_I + aOff)·y mod p61.
func (f *freivalds) rowOK(i int, right uint64) bool {
	var left acc
	for j, x := range f.c[i*f.t : (i+1)*f.t] {
		left.add(uint64(int64(x)+1<<31), f.r[j])
	}
	return subMod(left.mod(), f.cOffR) == subMod(right, f.aOffY)
}

// colIndex and rowIndex are the line indexes of the tile's column col of B
// and row i of A.
func (f *freivalds) colIndex(col int) uint32 { return f.J*uint32(f.t) + uint32(col) }
func (f *freivalds) rowIndex(i int) uint32   { return f.I*uint32(f.t) + uint32(i) }

// badRowsGeneric is the reference check, tile by tile.
func badRowsGeneric(fs []*freivalds, bad []int) {
	for j, f := range fs {
		bad[j] = badRowGeneric(f)
	}
}

// badRowGeneric checks one tile: y = B_J·r one generated column at a time,
// then each row of A against y, all with 128-bit accumulators.
func badRowGeneric(f *freivalds) int {
	line := make([]int32, f.k)
	ys := make([]acc, f.k)
	for col := 0; col < f.t; col++ {
		Line(f.g, MatB, f.b, f.colIndex(col), line)
		for q, x := range line {
			ys[q].add(uint64(x+f.v.bOff), f.r[col])
		}
	}
	y := make([]uint64, f.k)
	var ysum acc
	for q := range ys {
		y[q] = subMod(ys[q].mod(), f.bOffR)
		ysum.add(1, y[q])
	}
	f.setY(ysum.mod())
	for i := 0; i < f.t; i++ {
		Line(f.g, MatA, f.b, f.rowIndex(i), line)
		var right acc
		for q, a := range line {
			right.add(uint64(a+f.v.aOff), y[q])
		}
		if !f.rowOK(i, right.mod()) {
			return i
		}
	}
	return -1
}

// maxShare bounds how many tiles of one batch and tile row are checked
// against one generation of their rows of A: enough to catch most of what a
// sample shares, few enough to spread a round's tiles over the workers.
const maxShare = 4

// shareGroups groups the positions of sampled tiles idx by batch and tile
// row, at most maxShare per group, in order of first appearance.
func shareGroups(p Params, idx []uint64) [][]int {
	var groups [][]int
	open := map[[2]uint32]int{}
	for i, x := range idx {
		b, I, _ := p.TilePos(x)
		k := [2]uint32{b, I}
		if gi, ok := open[k]; ok && len(groups[gi]) < maxShare {
			groups[gi] = append(groups[gi], i)
			continue
		}
		open[k] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// checkShared runs Freivalds' check with the active kernel on tiles idx of
// one batch and tile row (values cs, random vectors rs) and classifies each
// tile's first mismatching row.
func checkShared(g *Generator, p Params, idx []uint64, cs [][]int32, rs [][]uint64) []*Failure {
	fs := make([]*freivalds, len(idx))
	for j := range idx {
		fs[j] = newFreivalds(g, p, idx[j], cs[j], rs[j])
	}
	bad := make([]int, len(fs))
	activeKernel().badRows(fs, bad)
	out := make([]*Failure, len(fs))
	for j, i := range bad {
		if i >= 0 {
			out[j] = fs[j].diagnose(idx[j], i)
		}
	}
	return out
}

// checkTile is checkShared for one tile.
func checkTile(g *Generator, p Params, idx uint64, c []int32, r []uint64) *Failure {
	return checkShared(g, p, []uint64{idx}, [][]int32{c}, [][]uint64{r})[0]
}

// diagnose regenerates the tile's inputs and classifies its failing row i.
func (f *freivalds) diagnose(idx uint64, i int) *Failure {
	bcols := make([]int32, f.t*f.k)
	for col := 0; col < f.t; col++ {
		Line(f.g, MatB, f.b, f.colIndex(col), bcols[col*f.k:(col+1)*f.k])
	}
	arow := make([]int32, f.k)
	Line(f.g, MatA, f.b, f.rowIndex(i), arow)
	return diagnose(idx, i, f.c[i*f.t:(i+1)*f.t], arow, bcols, f.k)
}
