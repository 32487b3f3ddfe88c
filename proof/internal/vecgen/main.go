// Command vecgen writes vec_amd64.s, the vector kernels of package proof:
// the Philox4x32-10 stream and the two halves of Freivalds' check, each for
// AVX-512 with IFMA, plain AVX-512 and AVX2.
//
// A vector lane is one Philox block, held as four 64-bit lanes' low 32 bits
// (the high halves carry garbage that never reaches a result): VPMULUDQ then
// yields the full 32×32→64 product of each lane, so a Philox round is two
// multiplies, two shifts and two three-way XORs per register of blocks. The
// register renaming of the rounds is tracked here, not in the assembly.
//
// The kernels see a chunk of W consecutive blocks of one line (W = 8 lanes
// for AVX-512, 4 for AVX2). Entry e = 2·word + half of lane l of chunk ch is
// element q = 8·(W·ch + l) + e of the line; the Go side stores vectors
// indexed by q in the same "slot" order, slot ch·8W + e·W + l, so no entry is
// ever moved between lanes. Field elements enter the multiplies as two limbs
// below 2^31 (package proof states the overflow bounds).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
)

// Argument block offsets; they must match vecArgs in package proof.
const (
	offRK      = 0 // [20]uint32: k0+i·w0 at i, k1+i·w1 at 10+i
	offMask    = 80
	offC0      = 88
	offC1      = 96
	offR0X     = 104 // hi(c2·m1) ^ k0, for the first round
	offC3      = 112
	offLines   = 120
	offChunks  = 128
	offR       = 136
	offY       = 144
	offOut     = 152
	offWords   = 160
	offYStride = 168
	offR0Lo    = 176 // lo(c2·m1), for the first round
)

// variant is one instruction set's kernel family.
type variant struct {
	suffix string // function name suffix
	w      int    // blocks per register
	avx512 bool
	ifma   bool
	share  int // tiles aside can check against one row's generation
}

func (v variant) reg(i int) string {
	if v.avx512 {
		return fmt.Sprintf("Z%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

// gen emits assembly for one variant.
type gen struct {
	out *bytes.Buffer
	v   variant
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(g.out, format+"\n", args...) }

// group is the Philox state of one register of blocks: s holds words 0-3,
// t two scratch registers. Rounds rename registers instead of moving them.
type group struct {
	s [4]string
	t [2]string
}

// each emits one instruction per group.
func (g *gen) each(gs []*group, f func(x *group)) {
	for _, x := range gs {
		f(x)
	}
}

// mov copies a vector register.
func (g *gen) mov(src, dst string) {
	if g.v.avx512 {
		g.p("\tVMOVDQU64 %s, %s", src, dst)
	} else {
		g.p("\tVMOVDQU %s, %s", src, dst)
	}
}

// bcastGPR broadcasts a general register into every qword of dst (AVX2
// broadcasts only from memory or an XMM register).
func (g *gen) bcastGPR(src, dst string) {
	if g.v.avx512 {
		g.p("\tVPBROADCASTQ %s, %s", src, dst)
		return
	}
	x := "X" + dst[1:]
	g.p("\tMOVQ %s, %s", src, x)
	g.p("\tVPBROADCASTQ %s, %s", x, dst)
}

// counterBase sets reg to the chunk's first counter word 0 (in CX) plus the
// lane index.
func (g *gen) counterBase(reg string) {
	g.bcastGPR("CX", reg)
	g.p("\tVPADDQ seq<>(SB), %s, %s", reg, reg)
}

// firstRound emits Philox's first round on every group, from the counter
// (c0, line+i, c2, c3) of group i, where c0 holds the chunk's first counter
// word 0 plus the lane index. Words 1-3 are the same in every lane, so the
// round's second product, c2·m1, is constant: its high half, XORed with k0,
// is in offR0X and its low half broadcast in lo. Only c0·m1 is multiplied.
func (g *gen) firstRound(gs []*group, c0, line string, c constRegs) {
	for i, x := range gs {
		if g.v.avx512 {
			g.p("\tVPMULUDQ.BCST mult<>+0(SB), %s, %s", c0, x.t[0])
		} else {
			g.p("\tVPMULUDQ %s, %s, %s", c.m0, c0, x.t[0])
		}
		g.p("\tLEAQ %d(%s), R13", i, line)
		g.p("\tXORQ %d(AX), R13", offR0X)
		g.bcastGPR("R13", x.s[0])
		g.mov(c.lo, x.s[1])
		g.p("\tVPSRLQ $32, %s, %s", x.t[0], x.s[2])
		if g.v.avx512 {
			g.p("\tVPTERNLOGD.BCST $0x96, %d(AX), %s, %s", offRK+40, c.c3, x.s[2])
		} else {
			g.p("\tVPXOR %s, %s, %s", c.c3, x.s[2], x.s[2])
			g.p("\tVPBROADCASTD %d(AX), %s", offRK+40, c.k)
			g.p("\tVPXOR %s, %s, %s", c.k, x.s[2], x.s[2])
		}
		x.s[3], x.t[0] = x.t[0], x.s[3]
	}
}

// rounds emits firstRound and the other nine Philox rounds on every group,
// interleaved. AVX2 needs the multipliers in m0, m1 and a scratch register k
// for the round keys.
func (g *gen) rounds(gs []*group, c0, line string, c constRegs) {
	g.firstRound(gs, c0, line, c)
	m0, m1, k := c.m0, c.m1, c.k
	for r := 1; r < 10; r++ {
		if g.v.avx512 {
			g.each(gs, func(x *group) { g.p("\tVPMULUDQ.BCST mult<>+0(SB), %s, %s", x.s[0], x.t[0]) })
			g.each(gs, func(x *group) { g.p("\tVPMULUDQ.BCST mult<>+8(SB), %s, %s", x.s[2], x.t[1]) })
			g.each(gs, func(x *group) { g.p("\tVPSRLQ $32, %s, %s", x.t[1], x.s[0]) })
			g.each(gs, func(x *group) { g.p("\tVPSRLQ $32, %s, %s", x.t[0], x.s[2]) })
			g.each(gs, func(x *group) { g.p("\tVPTERNLOGD.BCST $0x96, %d(AX), %s, %s", offRK+4*r, x.s[1], x.s[0]) })
			g.each(gs, func(x *group) { g.p("\tVPTERNLOGD.BCST $0x96, %d(AX), %s, %s", offRK+40+4*r, x.s[3], x.s[2]) })
		} else {
			g.each(gs, func(x *group) { g.p("\tVPMULUDQ %s, %s, %s", m0, x.s[0], x.t[0]) })
			g.each(gs, func(x *group) { g.p("\tVPMULUDQ %s, %s, %s", m1, x.s[2], x.t[1]) })
			g.each(gs, func(x *group) { g.p("\tVPSRLQ $32, %s, %s", x.t[1], x.s[0]) })
			g.each(gs, func(x *group) { g.p("\tVPSRLQ $32, %s, %s", x.t[0], x.s[2]) })
			g.each(gs, func(x *group) { g.p("\tVPXOR %s, %s, %s", x.s[1], x.s[0], x.s[0]) })
			g.each(gs, func(x *group) { g.p("\tVPXOR %s, %s, %s", x.s[3], x.s[2], x.s[2]) })
			g.p("\tVPBROADCASTD %d(AX), %s", offRK+4*r, k)
			g.each(gs, func(x *group) { g.p("\tVPXOR %s, %s, %s", k, x.s[0], x.s[0]) })
			g.p("\tVPBROADCASTD %d(AX), %s", offRK+40+4*r, k)
			g.each(gs, func(x *group) { g.p("\tVPXOR %s, %s, %s", k, x.s[2], x.s[2]) })
		}
		// New state: (hi1^c1^k0, lo1, hi0^c3^k1, lo0); lo1 and lo0 sit in
		// the products' registers, the old c1 and c3 become scratch.
		for _, x := range gs {
			x.s[1], x.t[1] = x.t[1], x.s[1]
			x.s[3], x.t[0] = x.t[0], x.s[3]
		}
	}
}

// entries splits word w of group x into its two 16-bit entries, masked:
// entry 2w into x.t[0], entry 2w+1 into x.t[1]; the word's register is free
// afterwards. AVX2 takes the mask from a register.
func (g *gen) entries(x *group, w int, mask string) {
	g.p("\tVPSRLD $16, %s, %s", x.s[w], x.t[1])
	if g.v.avx512 {
		g.p("\tVPANDQ.BCST %d(AX), %s, %s", offMask, x.s[w], x.t[0])
		g.p("\tVPANDQ.BCST %d(AX), %s, %s", offMask, x.t[1], x.t[1])
		return
	}
	g.p("\tVPAND %s, %s, %s", mask, x.s[w], x.t[0])
	g.p("\tVPAND %s, %s, %s", mask, x.t[1], x.t[1])
}

// mac emits acc += e·src in 64-bit lanes, with tmp as scratch where there is
// no IFMA; src is a register or memory, bcst broadcasts a memory qword.
func (g *gen) mac(acc, e, src, tmp string, bcst bool) {
	b := ""
	if bcst {
		b = ".BCST"
	}
	if g.v.ifma {
		g.p("\tVPMADD52LUQ%s %s, %s, %s", b, src, e, acc)
		return
	}
	g.p("\tVPMULUDQ%s %s, %s, %s", b, src, e, tmp)
	g.p("\tVPADDQ %s, %s, %s", tmp, acc, acc)
}

// begin opens function name+suffix+tail of the current variant.
func (g *gen) begin(name, tail, doc string) {
	name += g.v.suffix + tail
	g.p("// func %s(a *vecArgs)", name)
	g.p("// %s", doc)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	g.p("\tMOVQ a+0(FP), AX")
}

func (g *gen) end() {
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// regs names vector registers by index for this variant.
func (g *gen) regs(idx ...int) []string {
	r := make([]string, len(idx))
	for i, x := range idx {
		r[i] = g.v.reg(x)
	}
	return r
}

func (g *gen) newGroup(first int) *group {
	r := g.regs(first, first+1, first+2, first+3, first+4, first+5)
	return &group{s: [4]string{r[0], r[1], r[2], r[3]}, t: [2]string{r[4], r[5]}}
}

// constants loads the first round's constant low product and c3 (and, for AVX2, the mask and multipliers) into
// the registers the variant's functions keep them in.
type constRegs struct{ c0, lo, c3, mask, m0, m1, k string }

func (g *gen) constants() constRegs {
	if g.v.avx512 {
		c := constRegs{c0: "Z28", lo: "Z29", c3: "Z30"}
		g.p("\tVPBROADCASTQ %d(AX), %s", offR0Lo, c.lo)
		g.p("\tVPBROADCASTQ %d(AX), %s", offC3, c.c3)
		return c
	}
	c := constRegs{c0: "Y8", lo: "Y9", c3: "Y10", mask: "Y11", k: "Y12", m0: "Y13", m1: "Y14"}
	g.p("\tVPBROADCASTQ %d(AX), %s", offR0Lo, c.lo)
	g.p("\tVPBROADCASTQ %d(AX), %s", offC3, c.c3)
	g.p("\tVPBROADCASTQ %d(AX), %s", offMask, c.mask)
	g.p("\tVPBROADCASTQ mult<>+0(SB), %s", c.m0)
	g.p("\tVPBROADCASTQ mult<>+8(SB), %s", c.m1)
	return c
}

// blocks emits blocks: chunks·W Philox blocks of line c1 from counter c0,
// stored in order, four words each.
func (g *gen) blocks() {
	g.begin("blocks", "", "Requires: "+g.requires())
	c := g.constants()
	g.p("\tMOVQ %d(AX), CX", offC0)
	g.p("\tMOVQ %d(AX), R8", offC1)
	g.p("\tMOVQ %d(AX), DX", offChunks)
	g.p("\tMOVQ %d(AX), SI", offWords)
	if g.v.avx512 {
		g.p("\tVMOVDQU64 permidx<>+0(SB), Z26")
		g.p("\tVMOVDQU64 permidx<>+64(SB), Z27")
	}
	x := g.newGroup(16)
	if !g.v.avx512 {
		x = g.newGroup(0)
	}
	g.p("loop:")
	g.counterBase(c.c0)
	g.rounds([]*group{x}, c.c0, "R8", c)
	if g.v.avx512 {
		// Words (0,1) and (2,3) of each block into one qword each, then
		// the qwords of the two registers interleaved block by block.
		g.p("\tVPSLLQ $32, %s, %s", x.s[1], x.t[0])
		g.p("\tVPTERNLOGQ.BCST $0xf8, lowmask<>(SB), %s, %s", x.s[0], x.t[0])
		g.p("\tVPSLLQ $32, %s, %s", x.s[3], x.t[1])
		g.p("\tVPTERNLOGQ.BCST $0xf8, lowmask<>(SB), %s, %s", x.s[2], x.t[1])
		g.p("\tVMOVDQU64 Z26, Z24")
		g.p("\tVPERMI2Q %s, %s, Z24", x.t[1], x.t[0])
		g.p("\tVMOVDQU64 Z27, Z25")
		g.p("\tVPERMI2Q %s, %s, Z25", x.t[1], x.t[0])
		g.p("\tVMOVDQU64 Z24, (SI)")
		g.p("\tVMOVDQU64 Z25, 64(SI)")
	} else {
		g.p("\tVPSLLQ $32, %s, %s", x.s[1], x.t[0])
		g.p("\tVPBLENDD $0xaa, %s, %s, %s", x.t[0], x.s[0], x.t[0])
		g.p("\tVPSLLQ $32, %s, %s", x.s[3], x.t[1])
		g.p("\tVPBLENDD $0xaa, %s, %s, %s", x.t[1], x.s[2], x.t[1])
		g.p("\tVPUNPCKLQDQ %s, %s, Y6", x.t[1], x.t[0])
		g.p("\tVPUNPCKHQDQ %s, %s, Y7", x.t[1], x.t[0])
		g.p("\tVPERM2I128 $0x20, Y7, Y6, Y11")
		g.p("\tVPERM2I128 $0x31, Y7, Y6, Y15")
		g.p("\tVMOVDQU Y11, (SI)")
		g.p("\tVMOVDQU Y15, 32(SI)")
	}
	g.p("\tADDQ $%d, SI", 16*g.v.w)
	g.p("\tADDQ $%d, CX", g.v.w)
	g.p("\tDECQ DX")
	g.p("\tJNZ loop")
	g.end()
}

func (g *gen) requires() string {
	switch {
	case g.v.ifma:
		return "AVX512F, AVX512IFMA"
	case g.v.avx512:
		return "AVX512F"
	}
	return "AVX2"
}

// bside emits bside: for each chunk, over lines c1..c1+lines-1 of matrix B
// (columns of the tile), the sums Σ_col entry·ra[col] and Σ_col
// entry·rb[col] of every slot, stored as 8W limb-a sums then 8W limb-b sums
// per chunk; r holds (ra, rb) per column.
func (g *gen) bside() {
	g.begin("bside", "", "Requires: "+g.requires())
	c := g.constants()
	g.p("\tXORQ CX, CX")
	g.p("\tMOVQ %d(AX), DX", offChunks)
	g.p("\tMOVQ %d(AX), SI", offOut)
	if !g.v.avx512 {
		g.bsideAVX2(c)
		return
	}
	gs := []*group{g.newGroup(16), g.newGroup(22)}
	accA, accB := g.regs(0, 1, 2, 3, 4, 5, 6, 7), g.regs(8, 9, 10, 11, 12, 13, 14, 15)
	g.p("chunk:")
	for _, r := range append(accA, accB...) {
		g.zero(r)
	}
	g.counterBase(c.c0)
	g.p("\tMOVQ %d(AX), DI", offR)
	g.p("\tMOVQ %d(AX), R8", offC1)
	g.p("\tMOVQ %d(AX), R9", offLines)
	g.p("col:")
	g.rounds(gs, c.c0, "R8", c)
	for i, x := range gs {
		for w := 0; w < 4; w++ {
			g.entries(x, w, c.mask)
			for h := 0; h < 2; h++ {
				e := 2*w + h
				g.mac(accA[e], x.t[h], fmt.Sprintf("%d(DI)", 16*i), x.s[w], true)
				g.mac(accB[e], x.t[h], fmt.Sprintf("%d(DI)", 16*i+8), x.s[w], true)
			}
		}
	}
	g.p("\tADDQ $%d, DI", 16*len(gs))
	g.p("\tADDQ $%d, R8", len(gs))
	g.p("\tSUBQ $%d, R9", len(gs))
	g.p("\tJNZ col")
	for i, r := range append(accA, accB...) {
		g.p("\tVMOVDQU64 %s, %d(SI)", r, 64*i)
	}
	g.p("\tADDQ $%d, SI", 128*g.v.w)
	g.p("\tADDQ $%d, CX", g.v.w)
	g.p("\tDECQ DX")
	g.p("\tJNZ chunk")
	g.end()
}

// bsideAVX2 keeps the chunk's sums in memory: AVX2 has too few registers.
func (g *gen) bsideAVX2(c constRegs) {
	x := g.newGroup(0)
	ra, rb, tmp := "Y6", "Y7", "Y15"
	slot := func(limb, e int) string { return fmt.Sprintf("%d(SI)", 8*(8*g.v.w*limb+g.v.w*e)) }
	g.p("chunk:")
	g.p("\tVPXOR %s, %s, %s", tmp, tmp, tmp)
	for i := 0; i < 16; i++ {
		g.p("\tVMOVDQU %s, %s", tmp, slot(i/8, i%8))
	}
	g.counterBase(c.c0)
	g.p("\tMOVQ %d(AX), DI", offR)
	g.p("\tMOVQ %d(AX), R8", offC1)
	g.p("\tMOVQ %d(AX), R9", offLines)
	g.p("col:")
	g.rounds([]*group{x}, c.c0, "R8", c)
	g.p("\tVPBROADCASTQ (DI), %s", ra)
	g.p("\tVPBROADCASTQ 8(DI), %s", rb)
	for w := 0; w < 4; w++ {
		g.entries(x, w, c.mask)
		for h := 0; h < 2; h++ {
			for limb, r := range []string{ra, rb} {
				g.p("\tVPMULUDQ %s, %s, %s", r, x.t[h], tmp)
				g.p("\tVPADDQ %s, %s, %s", slot(limb, 2*w+h), tmp, tmp)
				g.p("\tVMOVDQU %s, %s", tmp, slot(limb, 2*w+h))
			}
		}
	}
	g.p("\tADDQ $16, DI")
	g.p("\tINCQ R8")
	g.p("\tDECQ R9")
	g.p("\tJNZ col")
	g.p("\tADDQ $%d, SI", 128*g.v.w)
	g.p("\tADDQ $%d, CX", g.v.w)
	g.p("\tDECQ DX")
	g.p("\tJNZ chunk")
	g.end()
}

// aside emits aside (n = 1) or asideXN (suffix X): for each line c1..c1+lines-1 of
// matrix A (rows of n tiles that share them), the per-lane sums Σ_q
// entry·ya[q] and Σ_q entry·yb[q] over all chunks for each tile's y, stored
// as W limb-a lanes then W limb-b lanes per row and tile; the n y vectors lie
// ystride bytes apart, each holding its limbs in slot order, 8W limb-a values
// then 8W limb-b values per chunk. Generating a row once for n tiles is the
// point of n > 1.
func (g *gen) aside(n int) {
	tail := ""
	if n > 1 {
		tail = fmt.Sprintf("x%d", n)
	}
	g.begin("aside", tail, "Requires: "+g.requires())
	c := g.constants()
	g.p("\tMOVQ %d(AX), SI", offOut)
	g.p("\tMOVQ %d(AX), R8", offC1)
	g.p("\tMOVQ %d(AX), R9", offLines)
	g.p("\tMOVQ %d(AX), BX", offYStride)
	gs, accs := g.asideRegs(n)
	ptrs := []string{"DI", "R10", "R11", "R12"}[:n]
	g.p("row:")
	for _, a := range accs {
		for _, r := range a {
			g.zero(r)
		}
	}
	g.p("\tXORQ CX, CX")
	g.p("\tMOVQ %d(AX), DI", offY)
	for j := 1; j < n; j++ {
		g.p("\tLEAQ (%s)(BX*1), %s", ptrs[j-1], ptrs[j])
	}
	g.p("\tMOVQ %d(AX), DX", offChunks)
	g.p("chunk:")
	g.counterBase(c.c0)
	g.rounds(gs, c.c0, "R8", c)
	for i, x := range gs {
		for w := 0; w < 4; w++ {
			g.entries(x, w, c.mask)
			for h := 0; h < 2; h++ {
				e := 2*w + h
				for j, ptr := range ptrs {
					a := accs[i*n+j]
					g.mac(a[h], x.t[h], fmt.Sprintf("%d(%s)", 8*g.v.w*e, ptr), x.s[w], false)
					g.mac(a[2+h], x.t[h], fmt.Sprintf("%d(%s)", 8*(8*g.v.w+g.v.w*e), ptr), x.s[w], false)
				}
			}
		}
	}
	for _, ptr := range ptrs {
		g.p("\tADDQ $%d, %s", 128*g.v.w, ptr)
	}
	g.p("\tADDQ $%d, CX", g.v.w)
	g.p("\tDECQ DX")
	g.p("\tJNZ chunk")
	for k, a := range accs {
		if a[0] != a[1] {
			g.p("\tVPADDQ %s, %s, %s", a[1], a[0], a[0])
			g.p("\tVPADDQ %s, %s, %s", a[3], a[2], a[2])
		}
		g.p("\t%s %s, %d(SI)", g.store(), a[0], 16*g.v.w*k)
		g.p("\t%s %s, %d(SI)", g.store(), a[2], 16*g.v.w*k+8*g.v.w)
	}
	g.p("\tADDQ $%d, SI", 16*g.v.w*len(accs))
	g.p("\tADDQ $%d, R8", len(gs))
	g.p("\tSUBQ $%d, R9", len(gs))
	g.p("\tJNZ row")
	g.end()
}

// asideRegs returns aside's Philox groups (two rows at once on AVX-512) and
// its accumulators, one set per (row, tile) in that order: limb a for even
// and odd entries, then limb b likewise. With few tiles the even and odd
// entries get separate registers, to shorten the chains of dependent adds.
func (g *gen) asideRegs(n int) ([]*group, [][4]string) {
	if !g.v.avx512 {
		if n != 1 {
			log.Fatalf("aside: AVX2 has registers for one tile")
		}
		return []*group{g.newGroup(0)}, [][4]string{{"Y6", "Y6", "Y7", "Y7"}}
	}
	gs := []*group{g.newGroup(16), g.newGroup(22)}
	var accs [][4]string
	next := 0
	reg := func() string { next++; return g.v.reg(next - 1) }
	for range gs {
		for j := 0; j < n; j++ {
			if n <= 2 {
				accs = append(accs, [4]string{reg(), reg(), reg(), reg()})
			} else {
				a, b := reg(), reg()
				accs = append(accs, [4]string{a, a, b, b})
			}
		}
	}
	if next > 16 {
		log.Fatalf("aside: %d accumulators for %d tiles", next, n)
	}
	return gs, accs
}

func (g *gen) zero(r string) {
	if g.v.avx512 {
		g.p("\tVPXORQ %s, %s, %s", r, r, r)
	} else {
		g.p("\tVPXOR %s, %s, %s", r, r, r)
	}
}

func (g *gen) store() string {
	if g.v.avx512 {
		return "VMOVDQU64"
	}
	return "VMOVDQU"
}

func main() {
	out := flag.String("out", "vec_amd64.s", "output file")
	flag.Parse()
	var b bytes.Buffer
	g := &gen{out: &b}
	g.p("// Code generated by command: go run ./internal/vecgen -out %s. DO NOT EDIT.", *out)
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	g.p("DATA mult<>+0(SB)/8, $0xd2511f53")
	g.p("DATA mult<>+8(SB)/8, $0xcd9e8d57")
	g.p("GLOBL mult<>(SB), RODATA|NOPTR, $16")
	g.p("DATA lowmask<>+0(SB)/8, $0xffffffff")
	g.p("GLOBL lowmask<>(SB), RODATA|NOPTR, $8")
	for i := 0; i < 8; i++ {
		g.p("DATA seq<>+%d(SB)/8, $%d", 8*i, i)
	}
	g.p("GLOBL seq<>(SB), RODATA|NOPTR, $64")
	// Qword i of block-pair output j takes word pair (i%2) of block 4j+i/2.
	for i, x := range []int{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15} {
		g.p("DATA permidx<>+%d(SB)/8, $%d", 8*i, x)
	}
	g.p("GLOBL permidx<>(SB), RODATA|NOPTR, $128")
	g.p("")
	for _, v := range []variant{
		{suffix: "512IFMA", w: 8, avx512: true, ifma: true, share: 4},
		{suffix: "512", w: 8, avx512: true, share: 4},
		{suffix: "256", w: 4, share: 1},
	} {
		g.v = v
		g.blocks()
		g.bside()
		for n := 1; n <= v.share; n++ {
			g.aside(n)
		}
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
