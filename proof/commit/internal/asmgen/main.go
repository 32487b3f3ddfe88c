// Command asmgen writes hash_amd64.s, the 16-way AVX-512 BLAKE3 compressor
// used by package commit.
//
// Each of the 16 lanes of a ZMM register holds one word of one chunk (or parent
// node). The message words are loaded as 16 plain 64-byte rows and transposed
// with unpack/shuffle instructions instead of VPGATHERDD, which is slow on
// AMD CPUs; rotations are single VPRORD instructions. The transposes are
// simulated symbolically while they are emitted, so the generator itself
// proves which register ends up holding which word.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
)

// BLAKE3 constants.
var iv = [8]uint32{
	0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
	0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
}

var msgPermutation = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}

const (
	flagChunkStart = 1
	flagChunkEnd   = 2
	flagParent     = 4
	blockLen       = 64
	chunkLen       = 1024
)

// elem labels one 32-bit word of the input: (row, word), where a row is one
// chunk or parent and word its index within the block or chaining value.
type elem struct{ row, word int }

// gen emits assembly and tracks the symbolic content of the Z registers.
type gen struct {
	out  bytes.Buffer
	regs map[string]*[16]elem
	free []string // Z registers holding nothing of interest
}

func (g *gen) p(format string, args ...any) {
	fmt.Fprintf(&g.out, format+"\n", args...)
}

func (g *gen) alloc() string {
	r := g.free[0]
	g.free = g.free[1:]
	return r
}

// Symbolic models of the shuffles, in Intel operand order (a = first source).
func unpackDQ(a, b *[16]elem, hi int) (o [16]elem) {
	for l := 0; l < 16; l += 4 {
		o[l], o[l+1], o[l+2], o[l+3] = a[l+2*hi], b[l+2*hi], a[l+2*hi+1], b[l+2*hi+1]
	}
	return o
}

func unpackQDQ(a, b *[16]elem, hi int) (o [16]elem) {
	for l := 0; l < 16; l += 4 {
		o[l], o[l+1], o[l+2], o[l+3] = a[l+2*hi], a[l+2*hi+1], b[l+2*hi], b[l+2*hi+1]
	}
	return o
}

func shufI32x4(a, b *[16]elem, imm int) (o [16]elem) {
	for lane := 0; lane < 4; lane++ {
		src, sel := a, (imm>>(2*lane))&3
		if lane >= 2 {
			src = b
		}
		copy(o[4*lane:4*lane+4], src[4*sel:4*sel+4])
	}
	return o
}

// pairs applies one transpose stage: each pair (x[i], x[j]) of logical values
// is replaced by its low and high combinations, reusing the pair's registers
// plus one free register, and returns the new logical order.
func (g *gen) pairs(x []string, pairs [][2]int, op string, loImm, hiImm int) []string {
	y := make([]string, len(x))
	for k, pr := range pairs {
		a, b := x[pr[0]], x[pr[1]]
		t := g.alloc()
		var vlo, vhi [16]elem
		switch op {
		case "VPUNPCKLDQ":
			vlo, vhi = unpackDQ(g.regs[a], g.regs[b], 0), unpackDQ(g.regs[a], g.regs[b], 1)
			g.p("\tVPUNPCKLDQ %s, %s, %s", b, a, t)
			g.p("\tVPUNPCKHDQ %s, %s, %s", b, a, b)
		case "VPUNPCKLQDQ":
			vlo, vhi = unpackQDQ(g.regs[a], g.regs[b], 0), unpackQDQ(g.regs[a], g.regs[b], 1)
			g.p("\tVPUNPCKLQDQ %s, %s, %s", b, a, t)
			g.p("\tVPUNPCKHQDQ %s, %s, %s", b, a, b)
		case "VSHUFI32X4":
			vlo, vhi = shufI32x4(g.regs[a], g.regs[b], loImm), shufI32x4(g.regs[a], g.regs[b], hiImm)
			g.p("\tVSHUFI32X4 $0x%02x, %s, %s, %s", loImm, b, a, t)
			g.p("\tVSHUFI32X4 $0x%02x, %s, %s, %s", hiImm, b, a, b)
		default:
			log.Fatalf("unknown op %s", op)
		}
		g.regs[t], g.regs[b] = &vlo, &vhi
		delete(g.regs, a)
		g.free = append(g.free, a)
		y[2*k], y[2*k+1] = t, b
	}
	return y
}

// transpose16 transposes the 16x16 word matrix held in rows, as the reference
// implementation's transpose_vecs_512 does, and returns for each word index
// the register holding that word of all 16 rows.
func (g *gen) transpose16(rows []string) [16]string {
	x := g.pairs(rows, butterfly(16, 1), "VPUNPCKLDQ", 0, 0)
	x = g.pairs(x, butterfly(16, 2), "VPUNPCKLQDQ", 0, 0)
	x = g.pairs(x, butterfly(16, 4), "VSHUFI32X4", 0x88, 0xdd)
	x = g.pairs(x, butterfly(16, 8), "VSHUFI32X4", 0x88, 0xdd)
	var words [16]string
	for _, r := range x {
		c := g.regs[r]
		for l := range c {
			if c[l] != (elem{l, c[0].word}) {
				log.Fatalf("transpose: %s lane %d holds %v", r, l, c[l])
			}
		}
		words[c[0].word] = r
	}
	for w, r := range words {
		if r == "" {
			log.Fatalf("transpose: word %d missing", w)
		}
	}
	return words
}

// butterfly returns the pairs (i, i+d) of 0 <= i < n with bit d of i clear.
// Each transpose stage pairs the low halves of one stage's outputs with each
// other, and the high halves likewise.
func butterfly(n, d int) [][2]int {
	var ps [][2]int
	for i := 0; i < n; i++ {
		if i&d == 0 {
			ps = append(ps, [2]int{i, i + d})
		}
	}
	return ps
}

// loadRows loads 16 rows of 64 bytes, row r at r*rowStride(base)(index*1),
// into the free registers and transposes them into message words. If prefetch
// is set, it also prefetches the 1 KiB at (prefetch).
func (g *gen) loadRows(base, index string, rowStride int, prefetch string) [16]string {
	rows := make([]string, 16)
	for r := range rows {
		rows[r] = g.alloc()
		addr := fmt.Sprintf("%d(%s)", r*rowStride, base)
		if index != "" {
			addr = fmt.Sprintf("%d(%s)(%s*1)", r*rowStride, base, index)
		}
		g.p("\tVMOVDQU32 %s, %s", addr, rows[r])
		if prefetch != "" {
			g.p("\tPREFETCHT0 %d(%s)", r*64, prefetch)
		}
		var c [16]elem
		for w := range c {
			c[w] = elem{r, w}
		}
		g.regs[rows[r]] = &c
	}
	return g.transpose16(rows)
}

// compress emits one BLAKE3 compression in all lanes: Z0-Z7 hold the input
// chaining value and receive the output one; m names the message registers.
// The state rows v8-v15 are initialised by init, which gets their registers.
func (g *gen) compress(m [16]string, init func(v []string)) {
	var v [16]string
	for i := 0; i < 8; i++ {
		v[i] = fmt.Sprintf("Z%d", i)
	}
	for i := 8; i < 16; i++ {
		v[i] = g.alloc()
	}
	init(v[8:])
	for r := 0; r < 7; r++ {
		g.p("\t// round %d", r+1)
		g.g4(v, [4][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}, m[:8])
		g.g4(v, [4][4]int{{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}}, m[8:])
		var next [16]string
		for i := range next {
			next[i] = m[msgPermutation[i]]
		}
		m = next
	}
	for i := 0; i < 8; i++ {
		g.p("\tVPXORD %s, %s, %s", v[i+8], v[i], v[i])
	}
	for _, r := range v[8:] {
		g.free = append(g.free, r)
	}
	for _, r := range m {
		g.free = append(g.free, r)
		delete(g.regs, r)
	}
}

// g4 emits four G functions on the given state columns, interleaved step by
// step for instruction-level parallelism.
func (g *gen) g4(v [16]string, cols [4][4]int, m []string) {
	each := func(format string, f func(i int, a, b, c, d string) []any) {
		for i, col := range cols {
			g.p(format, f(i, v[col[0]], v[col[1]], v[col[2]], v[col[3]])...)
		}
	}
	for half, rots := range [2][2]int{{16, 12}, {8, 7}} {
		each("\tVPADDD %s, %s, %s", func(i int, a, b, c, d string) []any { return []any{m[2*i+half], a, a} })
		each("\tVPADDD %s, %s, %s", func(i int, a, b, c, d string) []any { return []any{b, a, a} })
		each("\tVPXORD %s, %s, %s", func(i int, a, b, c, d string) []any { return []any{a, d, d} })
		each("\tVPRORD $%d, %s, %s", func(i int, a, b, c, d string) []any { return []any{rots[0], d, d} })
		each("\tVPADDD %s, %s, %s", func(i int, a, b, c, d string) []any { return []any{d, c, c} })
		each("\tVPXORD %s, %s, %s", func(i int, a, b, c, d string) []any { return []any{c, b, b} })
		each("\tVPRORD $%d, %s, %s", func(i int, a, b, c, d string) []any { return []any{rots[1], b, b} })
	}
}

// storeCVs transposes the chaining values in Z0-Z7 back to one row per lane
// and stores them to out (DI) as [16][8]uint32.
func (g *gen) storeCVs() {
	g.reset()
	h := make([]string, 8)
	for w := range h {
		h[w] = fmt.Sprintf("Z%d", w)
		var c [16]elem
		for l := range c {
			c[l] = elem{l, w}
		}
		g.regs[h[w]] = &c
	}
	x := g.pairs(h, butterfly(8, 1), "VPUNPCKLDQ", 0, 0)
	x = g.pairs(x, butterfly(8, 2), "VPUNPCKLQDQ", 0, 0)
	// Each 128-bit lane now holds four consecutive words of one row.
	for _, r := range x {
		c := g.regs[r]
		for lane := 0; lane < 4; lane++ {
			e := c[4*lane]
			for k := 1; k < 4; k++ {
				if c[4*lane+k] != (elem{e.row, e.word + k}) {
					log.Fatalf("storeCVs: %s lane %d not contiguous", r, lane)
				}
			}
			g.p("\tVEXTRACTI32X4 $%d, %s, %d(DI)", lane, r, e.row*32+e.word*4)
		}
	}
}

// reset frees Z8-Z31; Z0-Z7 hold the chaining values throughout.
func (g *gen) reset() {
	g.regs = map[string]*[16]elem{}
	g.free = nil
	for i := 8; i < 32; i++ {
		g.free = append(g.free, fmt.Sprintf("Z%d", i))
	}
}

// loadIV sets the chaining values to the key, which is the IV for hashing.
func (g *gen) loadIV() {
	for i := 0; i < 8; i++ {
		g.p("\tVPBROADCASTD iv<>+%d(SB), Z%d", 4*i, i)
	}
}

// initIV sets state rows v8-v11 to the IV.
func (g *gen) initIV(v []string) {
	for i := 0; i < 4; i++ {
		g.p("\tVPBROADCASTD iv<>+%d(SB), %s", 4*i, v[i])
	}
}

// chunks emits hashChunks16: 16 blocks per chunk, all chunks in parallel.
func (g *gen) chunks() {
	g.reset()
	g.p("// func hashChunks16(cvs *[16][8]uint32, buf *[16 * 1024]byte, counter uint64)")
	g.p("// Requires: AVX512F")
	g.p("TEXT ·hashChunks16(SB), NOSPLIT, $128-24")
	g.p("\tMOVQ cvs+0(FP), DI")
	g.p("\tMOVQ buf+8(FP), SI")
	g.p("\tMOVQ counter+16(FP), AX")
	g.p("")
	g.p("\t// Lane i counts chunk counter+i: low words at 0(SP), high words at")
	g.p("\t// 64(SP), with the carry out of the low word where it wraps.")
	g.p("\tVPBROADCASTD AX, Z8")
	g.p("\tVPADDD seq<>(SB), Z8, Z8")
	g.p("\tVPCMPUD $1, seq<>(SB), Z8, K1")
	g.p("\tSHRQ $32, AX")
	g.p("\tVPBROADCASTD AX, Z9")
	g.p("\tMOVL $1, AX")
	g.p("\tVPBROADCASTD AX, Z10")
	g.p("\tVPADDD Z10, Z9, K1, Z9")
	g.p("\tVMOVDQU32 Z8, (SP)")
	g.p("\tVMOVDQU32 Z9, 64(SP)")
	g.p("")
	g.loadIV()
	g.p("\tMOVL $%d, DX // flags of the first block", flagChunkStart)
	g.p("\tMOVL $%d, R8", blockLen)
	g.p("\tMOVL $%d, R9", flagChunkEnd)
	g.p("\tXORQ CX, CX // block offset within each chunk")
	g.p("")
	g.p("\t// The rows are 16 streams 1 KiB apart, which the hardware prefetcher")
	g.p("\t// follows poorly. Instead, each block prefetches 1 KiB of the 16 KiB")
	g.p("\t// after buf (the next group of a tile), in order. Prefetches never fault.")
	g.p("\tLEAQ %d(SI), R10", 16*chunkLen)
	g.p("")
	g.p("block:")
	m := g.loadRows("SI", "CX", chunkLen, "R10")
	g.compress(m, func(v []string) {
		g.initIV(v)
		g.p("\tVMOVDQU32 (SP), %s", v[4])
		g.p("\tVMOVDQU32 64(SP), %s", v[5])
		g.p("\tVPBROADCASTD R8, %s", v[6])
		g.p("\tVPBROADCASTD DX, %s", v[7])
	})
	g.p("\tADDQ $%d, CX", blockLen)
	g.p("\tADDQ $%d, R10", chunkLen)
	g.p("\tXORL DX, DX")
	g.p("\tCMPQ CX, $%d", chunkLen-blockLen)
	g.p("\tCMOVLEQ R9, DX")
	g.p("\tCMPQ CX, $%d", chunkLen)
	g.p("\tJNE block")
	g.p("")
	g.storeCVs()
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// parents emits hashParents16: one parent block (two adjacent CVs) per lane.
func (g *gen) parents() {
	g.reset()
	g.p("// func hashParents16(out *[16][8]uint32, in *[32][8]uint32)")
	g.p("// Requires: AVX512F")
	g.p("TEXT ·hashParents16(SB), NOSPLIT, $0-16")
	g.p("\tMOVQ out+0(FP), DI")
	g.p("\tMOVQ in+8(FP), SI")
	g.p("\tMOVL $%d, R8", blockLen)
	g.p("\tMOVL $%d, R9", flagParent)
	g.loadIV()
	m := g.loadRows("SI", "", blockLen, "")
	g.compress(m, func(v []string) {
		g.initIV(v)
		g.p("\tVPXORD %s, %s, %s", v[4], v[4], v[4])
		g.p("\tVPXORD %s, %s, %s", v[5], v[5], v[5])
		g.p("\tVPBROADCASTD R8, %s", v[6])
		g.p("\tVPBROADCASTD R9, %s", v[7])
	})
	g.storeCVs()
	g.p("\tVZEROUPPER")
	g.p("\tRET")
}

func main() {
	out := flag.String("out", "hash_amd64.s", "output file")
	flag.Parse()
	var g gen
	g.p("// Code generated by command: go run ./internal/asmgen -out %s. DO NOT EDIT.", *out)
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	for i, w := range iv {
		g.p("DATA iv<>+%d(SB)/4, $0x%08x", 4*i, w)
	}
	g.p("GLOBL iv<>(SB), RODATA|NOPTR, $32")
	g.p("")
	for i := 0; i < 16; i++ {
		g.p("DATA seq<>+%d(SB)/4, $%d", 4*i, i)
	}
	g.p("GLOBL seq<>(SB), RODATA|NOPTR, $64")
	g.p("")
	g.chunks()
	g.parents()
	if err := os.WriteFile(*out, g.out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
