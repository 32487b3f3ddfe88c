//go:build cgo

package hostsim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"

	"github.com/pog-network/pog/kernels/cuda"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/philox"
)

// TestHeaderLink checks that common_cuh.h, which makes the go command's
// build cache see edits to ../src/common.cuh, is that file.
func TestHeaderLink(t *testing.T) {
	link, err := os.ReadFile("common_cuh.h")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../src/common.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if string(link) != string(src) {
		t.Fatal("common_cuh.h differs from ../src/common.cuh: it must be a symbolic link to it")
	}
}

// TestPhiloxRandom checks the kernels' Philox against philox.Block, whose
// tests hold the Random123 known answers.
func TestPhiloxRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		ctr := [4]uint32{r.Uint32(), r.Uint32(), r.Uint32(), r.Uint32()}
		key := [2]uint32{r.Uint32(), r.Uint32()}
		if got, want := Philox(ctr, key), philox.Block(ctr, key); got != want {
			t.Fatalf("Philox(%08x, %08x) = %08x, want %08x", ctr, key, got, want)
		}
	}
}

func TestPackVals(t *testing.T) {
	if got, want := PackVals(8191, 4096, 2), uint64(8191)|4096<<16|2<<32; got != want {
		t.Errorf("PackVals = %#x, want %#x", got, want)
	}
}

func TestHalfBits(t *testing.T) {
	for v := int32(-2048); v <= 2048; v++ {
		h := HalfBits(v)
		if got := cuda.HalfToFloat(h); got != float32(v) {
			t.Fatalf("HalfBits(%d) = %#04x = %v", v, h, got)
		}
		if v == 0 && h != 0 {
			t.Fatalf("HalfBits(0) = %#04x, want +0", h)
		}
	}
}

// valueSet packs proof's value set of matrix m for the kernel.
func valueSet(p proof.Precision, m proof.Matrix) uint64 {
	mask, off, scale := p.LineValues(m)
	return PackVals(mask, uint32(off), uint32(scale))
}

// genArgs returns the pog_generate arguments for matrix m of p.
func genArgs(t *testing.T, p proof.Params, m proof.Matrix) GenArgs {
	t.Helper()
	key, err := p.Key()
	if err != nil {
		t.Fatal(err)
	}
	lpb := uint64(p.M)
	if m == proof.MatB {
		lpb = uint64(p.N)
	}
	return GenArgs{
		Lines:         uint64(p.Batch) * roundup(lpb, 128),
		LinesPerBatch: lpb,
		K:             uint64(p.K),
		Kp:            roundup(uint64(p.K), 64),
		Key:           binary.LittleEndian.Uint64(key[0:]),
		SaltMat:       uint64(binary.LittleEndian.Uint32(key[8:])) | uint64(m)<<32,
		Vals:          valueSet(p.Precision, m),
		FP16:          p.Precision == proof.FP16,
	}
}

func roundup(x, m uint64) uint64 { return (x + m - 1) / m * m }

func TestGenerate(t *testing.T) {
	tests := []struct {
		batch, m, k, n, tile uint32
	}{
		{1, 16, 1, 32, 16},     // K=1: one element per line
		{1, 32, 8, 16, 16},     // one full group
		{2, 32, 20, 48, 16},    // K not a multiple of 8, batch 2
		{3, 144, 100, 32, 16},  // rows beyond one 128 pad, K tail of 4
		{1, 128, 64, 256, 32},  // no padding at all on A
		{2, 64, 131, 128, 64},  // Kp = 192, partial last group
		{1, 256, 4096, 16, 16}, // K at the fp32 limit
	}
	for _, prec := range []proof.Precision{proof.FP16, proof.FP32} {
		for _, tt := range tests {
			if tt.k > prec.MaxK() {
				continue
			}
			p := proof.Params{Precision: prec, Batch: tt.batch, M: tt.m, K: tt.k, N: tt.n, Tile: tt.tile, Miner: []byte("hostsim")}
			p.Nonce[0] = byte(tt.k)
			g, err := proof.NewGenerator(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []proof.Matrix{proof.MatA, proof.MatB} {
				a := genArgs(t, p, m)
				got := Generate(a)
				lpp := roundup(a.LinesPerBatch, 128)
				line := make([]float32, p.K)
				bad := 0
				for r := uint64(0); r < a.Lines; r++ {
					b, idx := r/lpp, r%lpp
					for i := range line {
						line[i] = 0
					}
					if idx < a.LinesPerBatch {
						proof.Line(g, m, uint32(b), uint32(idx), line)
					}
					for e := uint64(0); e < a.Kp; e++ {
						var v float32
						if a.FP16 {
							h := binary.LittleEndian.Uint16(got[2*(r*a.Kp+e):])
							v = cuda.HalfToFloat(h)
							if h == 0x8000 {
								t.Errorf("%v %+v matrix %d row %d elem %d: -0", prec, tt, m, r, e)
							}
						} else {
							v = math.Float32frombits(binary.LittleEndian.Uint32(got[4*(r*a.Kp+e):]))
						}
						want := float32(0)
						if e < a.K {
							want = line[e]
						}
						if v != want && bad < 5 {
							bad++
							t.Errorf("%v %+v matrix %d row %d (batch %d line %d) elem %d: got %v, want %v", prec, tt, m, r, b, idx, e, v, want)
						}
					}
				}
			}
		}
	}
}

// TestGenGroupLargeRows checks pog_gen_group's 64-bit row split, which
// matrices of valid params never reach.
func TestGenGroupLargeRows(t *testing.T) {
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 16, K: 20, N: 32, Tile: 16, Miner: []byte("hostsim")}
	g, err := proof.NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	a := genArgs(t, p, proof.MatB)
	a.LinesPerBatch = 1 << 20
	lpp := uint64(1 << 20)
	line := make([]int32, p.K)
	for _, bi := range [][2]uint64{{70000, 5}, {65535, 1<<20 - 1}, {4096, 0}, {4095, 1<<20 - 1}} {
		b, idx := bi[0], bi[1]
		proof.Line(g, proof.MatB, uint32(b), uint32(idx), line)
		for grp := uint64(0); grp < 3; grp++ {
			v := GenGroup(a, b*lpp+idx, grp)
			for l := uint64(0); l < 8; l++ {
				want := int32(0)
				if e := 8*grp + l; e < uint64(p.K) {
					want = line[e]
				}
				if v[l] != want {
					t.Errorf("batch %d line %d group %d: got %v", b, idx, grp, v)
					break
				}
			}
		}
	}
}

func TestChunkAndParentCV(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	chunk := make([]byte, 1024)
	for _, counter := range []uint64{0, 1, 1<<32 - 1, 1 << 32, 0x123456789abc} {
		for i := range chunk {
			chunk[i] = byte(r.Uint32())
		}
		want := guts.ChainingValue(guts.CompressChunk(chunk, &guts.IV, counter, 0))
		if got := ChunkCV(chunk, counter); got != want {
			t.Errorf("ChunkCV(counter %#x) = %08x, want %08x", counter, got, want)
		}
	}
	for range 100 {
		var l, rr [8]uint32
		for i := range l {
			l[i], rr[i] = r.Uint32(), r.Uint32()
		}
		if got, want := ParentCV(l, rr), guts.ChainingValue(guts.ParentNode(l, rr, &guts.IV, 0)); got != want {
			t.Fatalf("ParentCV = %08x, want %08x", got, want)
		}
	}
}

func TestChunkCVsBase(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 300*1024) // not a multiple of the block's 256 chunks
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	const base = 1<<32 - 100 // counters cross 2^32
	got := ChunkCVs(data, base, 0)
	for c := range got {
		want := guts.ChainingValue(guts.CompressChunk(data[c*1024:(c+1)*1024], &guts.IV, base+uint64(c), 0))
		if got[c] != want {
			t.Fatalf("chunk %d: %08x, want %08x", c, got[c], want)
		}
	}
}

func TestTileCVs(t *testing.T) {
	tests := []struct {
		tileBytes, tiles int
		groups           []int // group_log2 values besides the default
	}{
		{1 << 10, 37, nil},
		{4 << 10, 10, []int{0, 1}},
		{256 << 10, 3, []int{0, 5}},
		{1 << 20, 2, []int{3}},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tt := range tests {
		data := make([]byte, tt.tileBytes*tt.tiles)
		for i := 0; i < len(data); i += 8 {
			binary.LittleEndian.PutUint64(data[i:], r.Uint64())
		}
		want, err := commit.TileCVs(data, tt.tileBytes, 0)
		if err != nil {
			t.Fatal(err)
		}
		def := DefaultGroupLog2(tt.tileBytes)
		for _, g := range append([]int{def}, tt.groups...) {
			got := TileCVs(data, tt.tileBytes, g)
			if len(got) != len(want) {
				t.Fatalf("tile %d group 2^%d: %d CVs, want %d", tt.tileBytes, g, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("tile %d group 2^%d: CV %d = %x, want %x", tt.tileBytes, g, i, got[i], want[i])
				}
			}
			leaves := make([]commit.CV, len(got))
			for i := range got {
				leaves[i] = got[i]
			}
			root, err := commit.Root(leaves)
			if err != nil {
				t.Fatal(err)
			}
			if root != commit.CV(blake3.Sum256(data)) {
				t.Errorf("tile %d group 2^%d: root %x, want blake3 %x", tt.tileBytes, g, root, blake3.Sum256(data))
			}
		}
	}
}

func TestDefaultGroupLog2(t *testing.T) {
	for _, tt := range [][2]int{{1 << 10, 0}, {4 << 10, 2}, {256 << 10, 8}, {1 << 20, 8}} {
		if got := DefaultGroupLog2(tt[0]); got != tt[1] {
			t.Errorf("DefaultGroupLog2(%d) = %d, want %d", tt[0], got, tt[1])
		}
	}
}
