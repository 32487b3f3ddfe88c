package cuda

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pog-network/pog/proof"
)

func TestPlanLayout(t *testing.T) {
	tests := []struct {
		name              string
		p                 proof.Params
		panelBytes        uint64
		mp, np, kp, elem  uint64
		panelRows         uint64
		groupLog2, passes int
		cvBytes, cv2Bytes uint64
	}{
		{"fp16 padded K", proof.Params{Precision: proof.FP16, Batch: 2, M: 1024, N: 1024, K: 1000, Tile: 64}, 0,
			1024, 1024, 1024, 2, 0, 4, 0, 32 * 2 * 1024 * 1024 * 4 / 1024 / 16, 0},
		{"fp32 odd shape", proof.Params{Precision: proof.FP32, Batch: 1, M: 336, N: 208, K: 8, Tile: 16}, 0,
			384, 256, 64, 4, 0, 0, 0, 32 * 336 * 208 * 4 / 1024, 0},
		{"1 MiB tiles need parent passes", proof.Params{Precision: proof.FP32, Batch: 1, M: 1024, N: 1024, K: 4096, Tile: 512}, scratchBudget,
			1024, 1024, 4096, 4, 1024, 8, 2, 32 * 4 * 1024 * 1024 / 1024 / 256, 32 * 4 * 1024 * 1024 / 1024 / 512},
		{"cuBLAS panel bounded by the scratch budget", proof.Params{Precision: proof.FP16, Batch: 1, M: 65536, N: 65536, K: 64, Tile: 128}, scratchBudget,
			65536, 65536, 64, 2, scratchBudget / (4 * 65536), 6, 0, 32 * 4 * 65536 * 65536 / 1024 / 64, 0},
		{"small panels: four per batch", proof.Params{Precision: proof.FP16, Batch: 2, M: 1024, N: 1024, K: 64, Tile: 64}, 1 << 20,
			1024, 1024, 64, 2, 256, 4, 0, 32 * 2 * 1024 * 1024 * 4 / 1024 / 16, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := planLayout(tt.p, tt.panelBytes)
			if l.mp != tt.mp || l.np != tt.np || l.kp != tt.kp || l.elem != tt.elem {
				t.Fatalf("padded %d×%d×%d elem %d, want %d×%d×%d elem %d", l.mp, l.np, l.kp, l.elem, tt.mp, tt.np, tt.kp, tt.elem)
			}
			if l.panelRows != tt.panelRows || l.panelRows%uint64(tt.p.Tile) != 0 {
				t.Fatalf("panel rows %d, want %d (a multiple of the tile edge)", l.panelRows, tt.panelRows)
			}
			if l.groupLog2 != tt.groupLog2 || l.parentPasses != tt.passes {
				t.Fatalf("hash plan group 2^%d + %d passes, want 2^%d + %d", l.groupLog2, l.parentPasses, tt.groupLog2, tt.passes)
			}
			// Every tile is one group merged up by the passes.
			if l.groupLog2+l.parentPasses != int(math.Log2(float64(tt.p.TileBytes()/chunkSize))) {
				t.Fatal("hash plan does not reach tile level")
			}
			if l.cvBytes != tt.cvBytes || l.cv2Bytes != tt.cv2Bytes {
				t.Fatalf("CV buffers %d, %d; want %d, %d", l.cvBytes, l.cv2Bytes, tt.cvBytes, tt.cv2Bytes)
			}
			want := l.aBytes + l.bBytes + l.outBytes + l.scratchBytes + l.cvBytes + l.cv2Bytes
			if got := l.total(); got < want || got > want+6*align {
				t.Fatalf("total %d, buffers sum to %d", got, want)
			}
			if l.aBytes != uint64(tt.p.Batch)*l.mp*l.kp*l.elem || l.outBytes != tt.p.OutputBytes() {
				t.Fatal("buffer sizes do not follow the padded shape")
			}
		})
	}
}

func TestGenArgs(t *testing.T) {
	for _, prec := range []proof.Precision{proof.FP16, proof.FP32} {
		p := proof.Params{Precision: prec, Batch: 1, M: 64, N: 64, K: 64, Tile: 16, Miner: []byte("m")}
		g, err := proof.NewGenerator(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []proof.Matrix{proof.MatA, proof.MatB} {
			key, saltMat, vals := genArgs(p, g, m)
			k, salt := g.Stream()
			mask, off, scale := prec.LineValues(m)
			if uint32(key) != k[0] || uint32(key>>32) != k[1] || uint32(saltMat) != salt || saltMat>>32 != uint64(m) ||
				vals&0xffff != uint64(mask) || vals>>16&0xffff != uint64(off) || vals>>32&0xff != uint64(scale) {
				t.Fatalf("%v matrix %d: packed %x %x %x", prec, m, key, saltMat, vals)
			}
		}
	}
}

func TestHalfToFloat(t *testing.T) {
	tests := []struct {
		bits uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xbc00, -1}, {0xc800, -8}, {0x4700, 7}, {0x5bf8, 255}, {0xdc00, -256},
		{0x6800, 2048}, {0x0001, 1.0 / (1 << 24)}, {0x8001, -1.0 / (1 << 24)}, {0x7bff, 65504},
	}
	for _, tt := range tests {
		if got := HalfToFloat(tt.bits); got != tt.want {
			t.Errorf("HalfToFloat(%#04x) = %v, want %v", tt.bits, got, tt.want)
		}
	}
	if !math.IsInf(float64(HalfToFloat(0x7c00)), 1) {
		t.Error("0x7c00 is +Inf")
	}
	line := decodeLine([]byte{0x00, 0x3c, 0x00, 0xc8}, 2)
	if len(line) != 2 || line[0] != 1 || line[1] != -8 {
		t.Errorf("decodeLine fp16 = %v", line)
	}
	line = decodeLine([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc5}, 4)
	if len(line) != 2 || line[0] != 1 || line[1] != -2048 {
		t.Errorf("decodeLine fp32 = %v", line)
	}
}

func TestGridSizes(t *testing.T) {
	if got := genBlocks(1<<30, 132); got != 32*132 {
		t.Errorf("genBlocks(2^30, 132 SMs) = %d, want the 32-per-SM cap", got)
	}
	if got := genBlocks(8, 132); got != 1 {
		t.Errorf("genBlocks(8) = %d, want 1", got)
	}
	if x, y := toTilesGrid(4096, 16384, 128); x != 2048 || y != 32 {
		t.Errorf("toTilesGrid = %d, %d; want 2048, 32", x, y)
	}
	if x, y := toTilesGrid(1<<20, 1<<20, 512); x != 65535 || y != 2048 {
		t.Errorf("toTilesGrid huge = %d, %d; want x capped at 65535", x, y)
	}
}

// TestConstantsMatchKernels keeps the Go mirrors of launch constants equal to
// the #defines the kernels were compiled with.
func TestConstantsMatchKernels(t *testing.T) {
	defines := map[string]int{}
	re := regexp.MustCompile(`(?m)^#define (POG_\w+) (\d+)u?\b`)
	files, _ := filepath.Glob("src/*.cu*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			defines[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	mirrors := map[string]int{
		"POG_PAD_MN": padMN, "POG_PAD_K": padK, "POG_B3_THREADS": b3Threads, "POG_GEN_THREADS": genThreads,
		"POG_GEMM_F16_BM": gemmF16BM, "POG_GEMM_F16_BN": gemmF16BN, "POG_GEMM_F16_THREADS": gemmF16Threads,
		"POG_GEMM_F32_BM": gemmF32BM, "POG_GEMM_F32_BN": gemmF32BN, "POG_GEMM_F32_THREADS": gemmF32Threads,
		"POG_TO_TILES_THREADS": toTilesThreads,
	}
	for name, want := range mirrors {
		got, ok := defines[name]
		if !ok {
			t.Errorf("%s not defined in src/", name)
		} else if got != want {
			t.Errorf("%s = %d in src/, %d in Go", name, got, want)
		}
	}
	if padMN%gemmF16BM != 0 || padMN%gemmF16BN != 0 || padMN%gemmF32BM != 0 || padMN%gemmF32BN != 0 {
		t.Error("GEMM block tiles must divide the row padding")
	}
	if parentThreads != b3Threads {
		t.Error("pog_parent_cvs is launched with the hash block size")
	}
}

// TestEmbeddedPTX checks every module targets its architecture and defines
// every kernel the backend loads.
func TestEmbeddedPTX(t *testing.T) {
	for _, arch := range ptxArchs {
		src, got, err := ptxFor(arch/10, arch%10)
		if err != nil || got != arch {
			t.Fatalf("ptxFor(sm_%d) = sm_%d, %v", arch, got, err)
		}
		if !strings.Contains(src, ".target sm_"+strconv.Itoa(arch)) {
			t.Errorf("sm_%d PTX has the wrong .target", arch)
		}
		for _, k := range kernelNames {
			if !strings.Contains(src, ".entry "+k+"(") {
				t.Errorf("sm_%d PTX lacks kernel %s", arch, k)
			}
		}
	}
	if _, got, _ := ptxFor(8, 9); got != 80 {
		t.Errorf("sm_89 should run the sm_80 PTX, got sm_%d", got)
	}
	if _, got, _ := ptxFor(10, 0); got != 90 {
		t.Errorf("sm_100 should run the sm_90 PTX, got sm_%d", got)
	}
	if _, _, err := ptxFor(7, 5); err == nil || !strings.Contains(err.Error(), "8.0 or newer") {
		t.Errorf("sm_75: %v, want a clear refusal", err)
	}
}

var testBufs = buffers{a: 1 << 40, bt: 2 << 40, out: 3 << 40, scratch: 4 << 40, cv: 5 << 40, cv2: 6 << 40}

func TestGenerateLaunches(t *testing.T) {
	p := proof.Params{Precision: proof.FP16, Batch: 3, M: 336, N: 208, K: 100, Tile: 16, Miner: []byte("m")}
	g, err := proof.NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	l := planLayout(p, 0)
	ks := l.generateLaunches(g, testBufs, 132)
	want := [][]uint64{
		{testBufs.a, 3 * 384, 336, 100, 128}, // 3 batches of 336 rows padded to 384; K 100 padded to 128
		{testBufs.bt, 3 * 256, 208, 100, 128},
	}
	if len(ks) != 2 {
		t.Fatalf("%d launches, want one per matrix", len(ks))
	}
	for i, k := range ks {
		if k.kernel != "pog_generate" || len(k.args) != 9 || k.block != genThreads {
			t.Fatalf("launch %d: %s with %d args", i, k.kernel, len(k.args))
		}
		for j, w := range want[i] {
			if k.args[j] != w {
				t.Errorf("launch %d arg %d = %d, want %d", i, j, k.args[j], w)
			}
		}
		if k.args[8] != 1 {
			t.Error("fp16 flag not set")
		}
		if saltMat := k.args[6]; saltMat>>32 != uint64(i) {
			t.Errorf("launch %d generates matrix %d", i, saltMat>>32)
		}
	}
}

func TestGemmLaunchesSplitBatches(t *testing.T) {
	p := proof.Params{Precision: proof.FP32, Batch: proof.MaxBatch, M: 16, N: 32, K: 10, Tile: 16}
	l := planLayout(p, 0)
	ks := l.gemmLaunches(testBufs)
	if len(ks) != 2 || ks[0].gz != maxGridZ || ks[1].gz != proof.MaxBatch-maxGridZ {
		t.Fatalf("launches %+v, want %d batches then the rest", ks, maxGridZ)
	}
	for _, k := range ks {
		if k.kernel != "pog_gemm_f32" || k.gx != 1 || k.gy != 1 || k.block != gemmF32Threads || len(k.args) != 7 {
			t.Fatalf("launch %+v", k)
		}
	}
	second := ks[1].args
	if second[0] != testBufs.a+maxGridZ*128*64*4 || second[1] != testBufs.bt+maxGridZ*128*64*4 || second[2] != testBufs.out+maxGridZ*16*32*4 {
		t.Fatalf("second launch does not start at batch %d: %v", maxGridZ, second[:3])
	}
}

// TestPanelsCoverOutput: the cuBLAS panels of every batch write consecutive,
// whole runs of tiles, together exactly the output, each where tile-major
// order puts its first tile, from the right rows of A.
func TestPanelsCoverOutput(t *testing.T) {
	p := proof.Params{Precision: proof.FP16, Batch: 2, M: 1024, N: 512, K: 64, Tile: 64}
	l := planLayout(p, 1<<20)
	ps := l.panels(testBufs)
	if len(ps) != 4 {
		t.Fatalf("%d panels, want 2 per batch", len(ps))
	}
	next := testBufs.out
	for _, pn := range ps {
		out, rows := pn.convert.args[1], pn.convert.args[5]
		first := uint64(pn.b)*p.TilesPerMatrix() + pn.r0/uint64(p.Tile)*uint64(p.N/p.Tile)
		if out != next || out != testBufs.out+first*uint64(p.TileBytes()) {
			t.Fatalf("panel b=%d r0=%d writes at %d, want %d", pn.b, pn.r0, out-testBufs.out, next-testBufs.out)
		}
		if rows != pn.rows || rows%uint64(p.Tile) != 0 {
			t.Fatalf("panel of %d rows", rows)
		}
		if pn.a != testBufs.a+(pn.b*l.mp+pn.r0)*l.kp*2 || pn.bt != testBufs.bt+pn.b*l.np*l.kp*2 {
			t.Fatalf("panel b=%d r0=%d reads the wrong inputs", pn.b, pn.r0)
		}
		if pn.convert.args[0] != testBufs.scratch || rows*uint64(p.N)*4 > l.scratchBytes {
			t.Fatal("panel does not fit the scratch buffer")
		}
		next = out + rows*uint64(p.N)*4
	}
	if next != testBufs.out+p.OutputBytes() {
		t.Fatalf("panels end at %d of %d output bytes", next-testBufs.out, p.OutputBytes())
	}
}

func TestHashLaunches(t *testing.T) {
	tests := []struct {
		name     string
		p        proof.Params
		launches int
		result   uint64
	}{
		{"64 KiB tiles: one pass", proof.Params{Precision: proof.FP16, Batch: 1, M: 256, N: 512, K: 8, Tile: 128}, 1, testBufs.cv},
		{"1 MiB tiles: two parent passes", proof.Params{Precision: proof.FP16, Batch: 1, M: 1024, N: 1024, K: 8, Tile: 512}, 3, testBufs.cv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := planLayout(tt.p, 0)
			ks, result := l.hashLaunches(testBufs)
			if len(ks) != tt.launches || result != tt.result {
				t.Fatalf("%d launches, result in %#x; want %d, %#x", len(ks), result, tt.launches, tt.result)
			}
			if ks[0].args[0] != testBufs.out || ks[0].args[2] != tt.p.OutputBytes()/chunkSize {
				t.Fatal("chunk pass does not cover the output")
			}
			last := ks[len(ks)-1]
			if len(ks) > 1 {
				if last.args[2] != tt.p.Tiles() || last.args[1] != result {
					t.Fatalf("last pass writes %d CVs to %#x, want %d tile CVs", last.args[2], last.args[1], tt.p.Tiles())
				}
				for i := 1; i < len(ks); i++ {
					if ks[i].args[0] == ks[i].args[1] {
						t.Fatal("a parent pass runs in place")
					}
				}
			} else if ks[0].args[2]>>ks[0].args[4] != tt.p.Tiles() {
				t.Fatal("chunk pass alone does not reach tile level")
			}
		})
	}
}

func TestIntToHalf(t *testing.T) {
	for v := int32(-2048); v <= 2048; v++ {
		if got := HalfToFloat(intToHalf(v)); got != float32(v) {
			t.Fatalf("intToHalf(%d) = %#04x = %v", v, intToHalf(v), got)
		}
	}
	raw := encodeInputs([][]int32{{1, -8}, {255}}, 4, 2)
	line := decodeLine(raw, 2)
	if want := []float32{1, -8, 0, 0, 255, 0, 0, 0}; len(line) != len(want) {
		t.Fatalf("encodeInputs = %v", line)
	} else {
		for i := range want {
			if line[i] != want[i] {
				t.Fatalf("encodeInputs = %v, want %v", line, want)
			}
		}
	}
	if line := decodeLine(encodeInputs([][]int32{{-4096, 1}}, 2, 4), 4); line[0] != -4096 || line[1] != 1 {
		t.Fatalf("fp32 encodeInputs = %v", line)
	}
}
