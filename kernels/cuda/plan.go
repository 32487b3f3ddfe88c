package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/pog-network/pog/proof"
)

// Mirrors of the kernels' compile-time constants (src/*.cu*); a test checks
// they agree.
const (
	padMN     = 128 // POG_PAD_MN: rows of A and Bᵀ are padded to a multiple
	padK      = 64  // POG_PAD_K: the inner dimension is padded to a multiple
	genGroup  = 8   // elements per Philox block, one thread each
	b3Threads = 256 // POG_B3_THREADS: chunks hashed per block
	chunkSize = 1024
)

// scratchBudget is the default bound on the float32 panel cuBLAS writes
// before conversion to tile-major int32; panels this big keep cuBLAS at full
// speed.
const scratchBudget = 512 << 20

// layout is one job's device memory: padded inputs, the tile-major output,
// the cuBLAS panel and the chaining-value buffers of the hash passes.
type layout struct {
	p                 proof.Params
	elem              uint64 // bytes per input element: 2 for fp16, 4 for fp32
	mp, np, kp        uint64 // padded dimensions
	aBytes, bBytes    uint64 // whole batch
	outBytes          uint64
	panelRows         uint64 // rows of one cuBLAS panel; 0 for the own kernels
	scratchBytes      uint64
	chunks            uint64 // BLAKE3 chunks in the output
	groupLog2         int    // chunks merged into one CV inside a hash block
	parentPasses      int    // parent passes from group CVs up to tile CVs
	cvBytes, cv2Bytes uint64 // the two ping-pong CV buffers
}

func roundup(x, m uint64) uint64 { return (x + m - 1) / m * m }

// align keeps every buffer 256-byte aligned, as the kernels' vector loads
// and cuBLAS expect.
const align = 256

// planLayout plans a job for the own kernels (panelBytes 0) or for cuBLAS
// writing panels of at most panelBytes (at least one t-row strip).
func planLayout(p proof.Params, panelBytes uint64) layout {
	l := layout{p: p, elem: 4}
	if p.Precision == proof.FP16 {
		l.elem = 2
	}
	b := uint64(p.Batch)
	l.mp, l.np, l.kp = roundup(uint64(p.M), padMN), roundup(uint64(p.N), padMN), roundup(uint64(p.K), padK)
	l.aBytes = b * l.mp * l.kp * l.elem
	l.bBytes = b * l.np * l.kp * l.elem
	l.outBytes = p.OutputBytes()
	if panelBytes > 0 {
		t, n := uint64(p.Tile), uint64(p.N)
		l.panelRows = min(uint64(p.M), max(t, panelBytes/(4*n)/t*t))
		l.scratchBytes = 4 * l.panelRows * n
	}
	l.chunks = l.outBytes / chunkSize
	tileLog2 := bits.Len64(uint64(p.TileBytes())/chunkSize) - 1
	l.groupLog2 = min(tileLog2, bits.Len(b3Threads)-1)
	l.parentPasses = tileLog2 - l.groupLog2
	l.cvBytes = 32 * (l.chunks >> l.groupLog2)
	if l.parentPasses > 0 {
		l.cv2Bytes = l.cvBytes / 2
	}
	return l
}

// total is the device memory a job allocates.
func (l layout) total() uint64 {
	var t uint64
	for _, n := range []uint64{l.aBytes, l.bBytes, l.outBytes, l.scratchBytes, l.cvBytes, l.cv2Bytes} {
		t += roundup(n, align)
	}
	return t
}

// genArgs packs pog_generate's stream and value-set arguments for matrix m.
func genArgs(p proof.Params, g *proof.Generator, m proof.Matrix) (key, saltMat, vals uint64) {
	k, salt := g.Stream()
	mask, off, scale := p.Precision.LineValues(m)
	return uint64(k[0]) | uint64(k[1])<<32, uint64(salt) | uint64(m)<<32,
		uint64(mask) | uint64(off)<<16 | uint64(scale)<<32
}

// fitError is the clear error for a challenge that does not fit on a device.
func fitError(device string, p proof.Params, need, free uint64) error {
	return fmt.Errorf("cuda: challenge %d×%d×%d (batch %d, %s) needs %.2f GiB of device memory, %s has %.2f GiB free",
		p.M, p.K, p.N, p.Batch, p.Precision, float64(need)/(1<<30), device, float64(free)/(1<<30))
}

// Launch geometry; mirrors of the kernels' block sizes (src/*.cu), checked
// by a test.
const (
	genThreads     = 256 // POG_GEN_THREADS
	parentThreads  = 256 // POG_B3_THREADS (pog_parent_cvs uses the same block)
	gemmF16BM      = 128 // POG_GEMM_F16_BM
	gemmF16BN      = 128 // POG_GEMM_F16_BN
	gemmF16Threads = 256 // POG_GEMM_F16_THREADS
	gemmF32BM      = 128 // POG_GEMM_F32_BM
	gemmF32BN      = 128 // POG_GEMM_F32_BN
	gemmF32Threads = 256 // POG_GEMM_F32_THREADS
	toTilesThreads = 256 // POG_TO_TILES_THREADS
	maxGridZ       = 65535
)

// genBlocks sizes pog_generate's grid-stride launch over elements (eight
// per thread): enough blocks to fill every SM several times over, no more.
func genBlocks(elements uint64, sms int) int {
	threads := (elements + genGroup - 1) / genGroup
	return int(max(1, min((threads+genThreads-1)/genThreads, uint64(32*max(sms, 1)))))
}

// toTilesGrid sizes pog_f32_to_tiles over a rows×n panel of t-row strips:
// x over one strip's float4 groups, y over strips; the kernel grid-strides
// past the 65535 limits.
func toTilesGrid(rows, n, t uint64) (x, y int) {
	return int(min((t*n/4+toTilesThreads-1)/toTilesThreads, 65535)), int(min(rows/t, 65535))
}

// decodeLine turns a device line of fp16 (elem 2) or fp32 (elem 4) values
// into float32.
func decodeLine(raw []byte, elem uint64) []float32 {
	out := make([]float32, uint64(len(raw))/elem)
	for i := range out {
		if elem == 2 {
			out[i] = HalfToFloat(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
		} else {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return out
}

// HalfToFloat converts IEEE binary16 bits to float32 exactly: how fp16-class
// matrices read back from a device are compared with proof.Line.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp, frac := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: value = frac·2⁻²⁴.
	f := float32(frac) / (1 << 24)
	if sign != 0 {
		f = -f
	}
	return f
}

// launch is one kernel launch: grid, block and the 8-byte arguments.
type launch struct {
	kernel     string
	gx, gy, gz int
	block      int
	args       []uint64
}

// buffers are a job's device addresses.
type buffers struct{ a, bt, out, scratch, cv, cv2 uint64 }

// generateLaunches fill A and Bᵀ, padding included.
func (l layout) generateLaunches(g *proof.Generator, buf buffers, sms int) []launch {
	p := l.p
	fp16 := uint64(0)
	if p.Precision == proof.FP16 {
		fp16 = 1
	}
	var out []launch
	for _, m := range []struct {
		mat       proof.Matrix
		dst       uint64
		lines, lp uint64
	}{{proof.MatA, buf.a, uint64(p.Batch) * l.mp, uint64(p.M)}, {proof.MatB, buf.bt, uint64(p.Batch) * l.np, uint64(p.N)}} {
		key, saltMat, vals := genArgs(p, g, m.mat)
		out = append(out, launch{"pog_generate", genBlocks(m.lines*l.kp, sms), 1, 1, genThreads,
			[]uint64{m.dst, m.lines, m.lp, uint64(p.K), l.kp, key, saltMat, vals, fp16}})
	}
	return out
}

// gemmLaunches run the own GEMM kernel over every batch, at most maxGridZ
// batches per launch, with the pointers moved to the launch's first batch.
func (l layout) gemmLaunches(buf buffers) []launch {
	p := l.p
	name, bm, bn, threads := "pog_gemm_f32", gemmF32BM, gemmF32BN, gemmF32Threads
	if p.Precision == proof.FP16 {
		name, bm, bn, threads = "pog_gemm_f16", gemmF16BM, gemmF16BN, gemmF16Threads
	}
	var out []launch
	for b0 := uint64(0); b0 < uint64(p.Batch); b0 += maxGridZ {
		nb := min(maxGridZ, uint64(p.Batch)-b0)
		out = append(out, launch{name, int(l.np) / bn, int(l.mp) / bm, int(nb), threads, []uint64{
			buf.a + b0*l.mp*l.kp*l.elem, buf.bt + b0*l.np*l.kp*l.elem, buf.out + b0*uint64(p.M)*uint64(p.N)*4,
			uint64(p.M), uint64(p.N), l.kp, uint64(p.Tile)}})
	}
	return out
}

// panel is one cuBLAS product: rows [r0, r0+rows) of batch b's output,
// computed into the scratch buffer from the A panel at a and Bᵀ at bt, then
// converted by convert into the output, where a panel of whole tile rows is
// one contiguous run of tiles.
type panel struct {
	b, r0, rows uint64
	a, bt       uint64
	convert     launch
}

func (l layout) panels(buf buffers) []panel {
	p := l.p
	m, n, t := uint64(p.M), uint64(p.N), uint64(p.Tile)
	var out []panel
	for b := uint64(0); b < uint64(p.Batch); b++ {
		for r0 := uint64(0); r0 < m; r0 += l.panelRows {
			rows := min(l.panelRows, m-r0)
			gx, gy := toTilesGrid(rows, n, t)
			out = append(out, panel{b: b, r0: r0, rows: rows,
				a:  buf.a + (b*l.mp+r0)*l.kp*l.elem,
				bt: buf.bt + b*l.np*l.kp*l.elem,
				convert: launch{"pog_f32_to_tiles", gx, gy, 1, toTilesThreads,
					[]uint64{buf.scratch, buf.out + (b*m+r0)*n*4, m, n, t, rows}}})
		}
	}
	return out
}

// hashLaunches reduce the output to one chaining value per tile: chunk CVs
// merged into groups inside blocks, then parent passes ping-ponging between
// the two CV buffers. result is the buffer holding the tile CVs.
func (l layout) hashLaunches(buf buffers) (out []launch, result uint64) {
	out = append(out, launch{"pog_chunk_cvs", int((l.chunks + b3Threads - 1) / b3Threads), 1, 1, b3Threads,
		[]uint64{buf.out, buf.cv, l.chunks, 0, uint64(l.groupLog2)}})
	src, dst, count := buf.cv, buf.cv2, l.chunks>>l.groupLog2
	for i := 0; i < l.parentPasses; i++ {
		count /= 2
		out = append(out, launch{"pog_parent_cvs", int((count + parentThreads - 1) / parentThreads), 1, 1, parentThreads,
			[]uint64{src, dst, count}})
		src, dst = dst, src
	}
	return out, src
}

// intToHalf is the binary16 encoding of an integer of magnitude at most 2048
// (all exact in fp16), for inputs a host writes to the device.
func intToHalf(v int32) uint16 {
	var sign uint16
	if v < 0 {
		sign, v = 0x8000, -v
	}
	if v == 0 {
		return sign
	}
	e := bits.Len32(uint32(v)) - 1
	return sign | uint16(e+15)<<10 | uint16(uint32(v)<<10>>e)&0x3ff
}

// encodeInputs lays rows (each k integers) out as the device holds them:
// padded to rows of kp elements of elem bytes, little-endian fp16 or fp32.
func encodeInputs(rows [][]int32, kp, elem uint64) []byte {
	out := make([]byte, uint64(len(rows))*kp*elem)
	for r, row := range rows {
		for c, v := range row {
			at := (uint64(r)*kp + uint64(c)) * elem
			if elem == 2 {
				binary.LittleEndian.PutUint16(out[at:], intToHalf(v))
			} else {
				binary.LittleEndian.PutUint32(out[at:], math.Float32bits(float32(v)))
			}
		}
	}
	return out
}
