package proof

import (
	"math/bits"
	"sync"
)

// vecArgs is the argument block of the generated kernels; cmd vecgen hard-codes
// its field offsets (TestVecArgsLayout checks them).
type vecArgs struct {
	rk      [20]uint32 // round keys: k0+i·w0 at i, k1+i·w1 at 10+i
	mask    uint64     // entry mask of the matrix generated
	c0      uint64     // blocks: first counter word 0
	c1      uint64     // first line (counter word 1)
	r0x     uint64     // the first round's hi(c2·m1) ^ k0 (see r0lo)
	c3      uint64     // counter word 3: the salt
	lines   uint64     // bside, aside: lines to walk, even
	chunks  uint64     // chunks of w blocks per line
	r       *uint64    // bside: per tile column, r's limbs (ra, rb)
	y       *uint64    // aside: y's limbs in slot order
	out     *uint64    // bside: per-chunk slot sums; aside: per-row lane sums
	words   *uint32    // blocks: the output words
	ystride uint64     // aside: bytes from one tile's y to the next's
	// r0lo is the first round's lo(c2·m1): counter word 2 (2·batch +
	// matrix) is the same in every lane, so c2·m1 is precomputed.
	r0lo uint64
}

// setStream sets the Philox key and counter words 2 and 3 of a kernel call.
func (a *vecArgs) setStream(key [2]uint32, c2, c3 uint32) {
	a.rk = roundKeys(key)
	hi, lo := bits.Mul32(0xCD9E8D57, c2)
	a.r0x, a.r0lo, a.c3 = uint64(hi^a.rk[0]), uint64(lo), uint64(c3)
}

// vecKernel runs Freivalds' check with a generated kernel family of w
// blocks per vector.
//
// Slots: the kernels never move an entry between lanes, so vectors indexed
// by the element q of a line are stored in slot order: per chunk ch of w
// blocks, slot ch·8w + e·w + l holds element 8·(w·ch + l) + e (lane l, entry
// e = 2·word + half of its block). Slots past K are zero in y.
//
// Limbs: a field element x < 2^61 enters the multiplies as xa = x mod 2^31
// and xb = x >> 31 < 2^30, so every product of an entry (at most 2^13 − 1)
// and a limb is below 2^44: exact in VPMULUDQ's 64-bit product and in
// VPMADD52LUQ's 52-bit one. Sums stay far below 2^64 (TestVecBounds):
//   - bside: per slot Σ over at most MaxTile = 2^9 columns of entry·limb,
//     entries of B at most 15 (fp16) or 1 (fp32): < 2^9·2^4·2^31 = 2^44;
//   - aside: per row Σ over all lanes and K ≤ MaxK of entry·limb, entries of
//     A at most 511 (fp16, K ≤ 8192) or 8191 (fp32, K ≤ 4096): < 2^56.
type vecKernel struct {
	w             int
	blocks, bside func(*vecArgs)
	aside         []func(*vecArgs) // aside[n-1] checks n tiles' y against each row
}

func (v *vecKernel) kernel(name string) *kernel {
	return &kernel{name: name, blocks: v.blocksInto, badRows: v.badRows}
}

const limbBits = 31

func roundKeys(key [2]uint32) (rk [20]uint32) {
	k0, k1 := key[0], key[1]
	for i := 0; i < 10; i++ {
		rk[i], rk[10+i] = k0, k1
		k0 += 0x9E3779B9
		k1 += 0xBB67AE85
	}
	return rk
}

// blocksInto is kernel.blocks: whole chunks in the vector kernel, the rest
// in Go.
func (v *vecKernel) blocksInto(dst []uint32, ctr [4]uint32, key [2]uint32) {
	n := len(dst) / 4 / v.w
	if n > 0 {
		// Pooled: a kernel called through a func value makes its
		// arguments escape (an allocation a line, BenchmarkLineShort).
		a := blockArgs.Get().(*vecArgs)
		*a = vecArgs{c0: uint64(ctr[0]), c1: uint64(ctr[1]), chunks: uint64(n), words: &dst[0]}
		a.setStream(key, ctr[2], ctr[3])
		v.blocks(a)
		a.words = nil
		blockArgs.Put(a)
	}
	ctr[0] += uint32(n * v.w)
	blocksGeneric(dst[4*n*v.w:], ctr, key)
}

var blockArgs = sync.Pool{New: func() any { return new(vecArgs) }}

// combine returns (sa + 2^31·sb) mod p61.
func combine(sa, sb uint64) uint64 {
	hi, lo := sb>>(64-limbBits), sb<<limbBits
	lo, c := bits.Add64(lo, sa, 0)
	return reduce(hi+c, lo)
}

// badRows is kernel.badRows: each tile's y = B_J·r in bside, then each row
// of A, generated once for up to len(v.aside) tiles, against their y in
// aside.
func (v *vecKernel) badRows(fs []*freivalds, bad []int) {
	for len(fs) > 0 {
		n := min(len(fs), len(v.aside))
		v.badRowsShared(fs[:n], bad[:n])
		fs, bad = fs[n:], bad[n:]
	}
}

func (v *vecKernel) badRowsShared(fs []*freivalds, bad []int) {
	w, n, f0 := v.w, len(fs), fs[0]
	chunks := (f0.k + 8*w - 1) / (8 * w)
	ylen := 16 * w * chunks
	sc := scratchPool.Get().(*vecScratch)
	defer scratchPool.Put(sc)
	sc.rl, sc.sums, sc.y = grow(sc.rl, 2*f0.t), grow(sc.sums, ylen), grow(sc.y, n*ylen)
	sc.rows = grow(sc.rows, 2*w*f0.t*n)
	a := vecArgs{lines: uint64(f0.t), chunks: uint64(chunks)}
	for j, f := range fs {
		for c, x := range f.r {
			sc.rl[2*c], sc.rl[2*c+1] = x&(1<<limbBits-1), x>>limbBits
		}
		a.mask, a.c1 = uint64(f.v.bMask), uint64(f.colIndex(0))
		a.setStream(f.g.key, f.b<<1|uint32(MatB), f.g.salt)
		a.r, a.out = &sc.rl[0], &sc.sums[0]
		v.bside(&a)
		v.ySlots(f, sc.y[j*ylen:(j+1)*ylen], sc.sums, chunks)
	}
	a.mask, a.c1 = uint64(f0.v.aMask), uint64(f0.rowIndex(0))
	a.setStream(f0.g.key, f0.b<<1|uint32(MatA), f0.g.salt)
	a.r, a.y, a.ystride, a.out = nil, &sc.y[0], uint64(8*ylen), &sc.rows[0]
	v.aside[n-1](&a)
	for j, f := range fs {
		bad[j] = -1
		for i := 0; i < f.t; i++ {
			// aside stores W limb-a then W limb-b lanes per row and tile.
			var sa, sb uint64
			lanes := sc.rows[2*w*(i*n+j):][:2*w]
			for l := 0; l < w; l++ {
				sa += lanes[l]
				sb += lanes[w+l]
			}
			if !f.rowOK(i, combine(sa, sb)) {
				bad[j] = i
				break
			}
		}
	}
}

// ySlots turns bside's sums into y = (B_J + bOff)·r − bOff·Σr, split in
// limbs and in slot order (zero past K), and records Σy.
func (v *vecKernel) ySlots(f *freivalds, y, sums []uint64, chunks int) {
	w := v.w
	var sumHi, sumLo uint64 // Σy, exact: K values below 2^61
	for ch := 0; ch < chunks; ch++ {
		base := 16 * w * ch
		for e := 0; e < 8; e++ {
			for l := 0; l < w; l++ {
				s := base + e*w + l
				if 8*(w*ch+l)+e >= f.k {
					y[s], y[s+8*w] = 0, 0
					continue
				}
				// bside summed the masked draws; B + bOff is bScale times that.
				x := combine(sums[s], sums[s+8*w])
				if f.v.bScale != 1 {
					x = mulSmall(uint64(f.v.bScale), x)
				}
				yq := subMod(x, f.bOffR)
				y[s], y[s+8*w] = yq&(1<<limbBits-1), yq>>limbBits
				var c uint64
				sumLo, c = bits.Add64(sumLo, yq, 0)
				sumHi += c
			}
		}
	}
	f.setY(reduce(sumHi, sumLo))
}

// vecScratch is one tile check's buffers, reused across checks.
type vecScratch struct{ rl, sums, y, rows []uint64 }

var scratchPool = sync.Pool{New: func() any { return new(vecScratch) }}

// grow returns b resized to n, reallocated only when too small.
func grow(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	return b[:n]
}
