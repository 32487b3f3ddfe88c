//go:build cuda

package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/kernels/cuda"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"lukechampine.com/blake3"
)

// GPUCheck is `pog gpu-check`, what scripts/gpu-check.sh runs on a GPU
// machine: JSON lines for the devices, bit-exactness against the CPU
// backend for each GEMM implementation, then throughput at sizes measured
// for at least --min-seconds each. Exit 1 if any correctness check fails.
func GPUCheck(args []string, stdout, stderr io.Writer, parse Parse) int {
	fs := flag.NewFlagSet("pog gpu-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := defineGPUCheckFlags(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	enc := json.NewEncoder(stdout)
	emit := func(v map[string]any) { enc.Encode(v) }
	bs, fail, err := openGPUBackends(*f.cublasPath, emit)
	if err != nil {
		emit(map[string]any{"check": "open", "ok": false, "error": err.Error()})
		return 1
	}
	defer bs.close()
	ctx := context.Background()
	fail |= bs.checkCorrectness(ctx, emit)
	if *f.skipSpeed {
		return fail
	}
	fail |= bs.checkSpeed(ctx, f, emit)
	for i := 0; i < bs.own.Devices(); i++ {
		bw, err := bs.own.Bandwidth(ctx, i, 3*time.Second)
		r := map[string]any{"check": "bandwidth", "device": i, "result": bw, "ok": err == nil}
		if err != nil {
			r["error"] = err.Error()
		}
		emit(r)
	}
	return fail
}

// gpuCheckFlags are pog gpu-check's flags, as parsed.
type gpuCheckFlags struct {
	ref16, ref32, minSec *float64
	size16, size32, tile *uint
	cublasPath           *string
	skipSpeed            *bool
}

func defineGPUCheckFlags(fs *flag.FlagSet) *gpuCheckFlags {
	return &gpuCheckFlags{
		ref16:      fs.Float64("reference-fp16", 0, "cuBLAS reference TFLOPS for the fp16 product (from scripts/gpu_reference.py)"),
		ref32:      fs.Float64("reference-fp32", 0, "cuBLAS reference TFLOPS for the fp32 product"),
		size16:     fs.Uint("size-fp16", 16384, "M = N of the fp16 speed runs (K is the class maximum, 8192)"),
		size32:     fs.Uint("size-fp32", 8192, "M = N of the fp32 speed runs (K is the class maximum, 4096)"),
		tile:       fs.Uint("tile", 128, "tile edge of the speed runs"),
		minSec:     fs.Float64("min-seconds", 1, "each speed figure is measured over at least this long"),
		cublasPath: fs.String("cublas", "", "libcublas to test beside the own kernels (default: search the usual sonames)"),
		skipSpeed:  fs.Bool("correctness-only", false, "skip the speed runs"),
	}
}

// gpuBackends are the GEMM implementations gpu-check compares, by mode:
// modes get the correctness checks, speedModes the speed runs.
type gpuBackends struct {
	own               *cuda.Backend
	byMode            map[string]*cuda.Backend
	modes, speedModes []string
	opened            []*cuda.Backend
}

// openGPUBackends opens the own kernels (an error if they fail) and
// cuBLAS beside them where it loads, reporting on emit; fail is 1 if
// cuBLAS was asked for by path and did not load.
func openGPUBackends(cublasPath string, emit func(map[string]any)) (bs *gpuBackends, fail int, err error) {
	own, err := cuda.Open(cuda.Config{GEMM: "own"})
	if err != nil {
		return nil, 0, err
	}
	bs = &gpuBackends{own: own, byMode: map[string]*cuda.Backend{"own": own}, modes: []string{"own"}, speedModes: []string{"own"}, opened: []*cuda.Backend{own}}
	for i := 0; i < own.Devices(); i++ {
		emit(map[string]any{"check": "device", "info": own.DeviceInfo(i), "notes": own.Notes()})
	}
	// cuBLAS twice: as a miner runs it, and with 1 MiB panels so that the
	// correctness cases cross several panels per batch.
	b, err := cuda.Open(cuda.Config{GEMM: "cublas", CUBLAS: cublasPath})
	if err != nil {
		emit(map[string]any{"check": "cublas", "ok": false, "error": err.Error()})
		if cublasPath != "" { // asked for, so its absence is a failure
			fail = 1
		}
		return bs, fail, nil
	}
	bs.opened = append(bs.opened, b)
	bs.byMode["cublas"] = b
	emit(map[string]any{"check": "cublas", "ok": true, "info": b.DeviceInfo(0)})
	if bp, err := cuda.Open(cuda.Config{GEMM: "cublas", CUBLAS: cublasPath, PanelBytes: 1 << 20}); err == nil {
		bs.opened = append(bs.opened, bp)
		bs.byMode["cublas-panels"] = bp
		bs.modes = append(bs.modes, "cublas", "cublas-panels")
		bs.speedModes = append(bs.speedModes, "cublas")
	}
	return bs, 0, nil
}

// close closes the backends, the last opened first.
func (bs *gpuBackends) close() {
	for i := len(bs.opened) - 1; i >= 0; i-- {
		bs.opened[i].Close()
	}
}

// checkCorrectness emits the correctness and extreme-value checks of each
// mode; it returns 1 if any failed.
func (bs *gpuBackends) checkCorrectness(ctx context.Context, emit func(map[string]any)) (fail int) {
	for _, mode := range bs.modes {
		var rs []map[string]any
		for _, c := range correctnessCases() {
			rs = append(rs, checkCorrect(ctx, bs.byMode[mode], c))
			rs[len(rs)-1]["check"] = "correctness"
		}
		for _, c := range extremeCases() {
			rs = append(rs, checkExtreme(ctx, bs.byMode[mode], c))
			rs[len(rs)-1]["check"] = "extremes"
		}
		for _, r := range rs {
			r["gemm"] = mode
			if r["ok"] != true {
				fail = 1
			}
			emit(r)
		}
	}
	return fail
}

// checkSpeed emits the speed runs of each speed mode at both precisions,
// against the cuBLAS reference figures where given; it returns 1 if any
// run failed.
func (bs *gpuBackends) checkSpeed(ctx context.Context, f *gpuCheckFlags, emit func(map[string]any)) (fail int) {
	for _, mode := range bs.speedModes {
		for _, s := range []struct {
			prec proof.Precision
			size uint32
			ref  float64
		}{{proof.FP16, uint32(*f.size16), *f.ref16}, {proof.FP32, uint32(*f.size32), *f.ref32}} {
			p := proof.Params{Precision: s.prec, Batch: 1, M: s.size, N: s.size, K: s.prec.MaxK(), Tile: uint32(*f.tile), Miner: []byte("gpu-check")}
			r, err := measureSpeed(ctx, bs.byMode[mode], p, time.Duration(*f.minSec*float64(time.Second)))
			if err != nil {
				emit(map[string]any{"check": "speed", "gemm": mode, "precision": s.prec.String(), "ok": false, "error": err.Error()})
				fail = 1
				continue
			}
			r["check"], r["gemm"] = "speed", mode
			if s.ref > 0 {
				r["reference_tflops"] = s.ref
				r["gemm_vs_reference"] = r["gemm_tflops"].(float64) / s.ref
				r["round_vs_reference"] = r["round_tflops"].(float64) / s.ref
			}
			emit(r)
		}
	}
	return fail
}

type correctnessCase struct {
	prec       proof.Precision
	batch      uint32
	m, n, k, t uint32
}

// correctnessCases cover both classes, batches, shapes off the 128-row
// padding, K off the 64 padding and at the class maximum, and the smallest
// and largest tiles (the largest needs parent passes above the hash blocks).
func correctnessCases() []correctnessCase {
	return []correctnessCase{
		{proof.FP16, 2, 1024, 1024, 1000, 64},
		{proof.FP16, 1, 336, 208, 8192, 16},
		{proof.FP32, 1, 512, 384, 777, 16},
		{proof.FP32, 1, 1024, 1024, 4096, 512},
		{proof.FP16, 3, 256, 512, 64, 32},
	}
}

// checkCorrect runs case c on be and on the CPU backend: the generated
// lines, the tile CVs, the tiles themselves and the root must agree.
func checkCorrect(ctx context.Context, be kernels.Backend, c correctnessCase) map[string]any {
	p := proof.Params{Precision: c.prec, Batch: c.batch, M: c.m, N: c.n, K: c.k, Tile: c.t, Miner: []byte("gpu-check")}
	rand.NewChaCha8([32]byte{byte(c.m), byte(c.n), byte(c.k), byte(c.t)}).Read(p.Nonce[:])
	r := map[string]any{"precision": c.prec.String(), "batch": c.batch, "m": c.m, "n": c.n, "k": c.k, "tile": c.t, "ok": false}
	fail := func(err error) map[string]any { r["error"] = err.Error(); return r }

	ref, err := cpu.Backend{}.Start(p, kernels.Options{})
	if err != nil {
		return fail(err)
	}
	defer ref.Close()
	cpuCVs, err := kernels.Compute(ctx, ref)
	if err != nil {
		return fail(fmt.Errorf("cpu: %w", err))
	}
	job, err := be.Start(p, kernels.Options{})
	if err != nil {
		return fail(err)
	}
	defer job.Close()
	if err := job.Generate(ctx); err != nil {
		return fail(err)
	}
	lines, badLines, err := checkLines(job, p)
	if err != nil {
		return fail(err)
	}
	r["lines_checked"], r["lines_wrong"] = lines, badLines
	if err := job.Multiply(ctx); err != nil {
		return fail(err)
	}
	cvs, err := job.TileCVs(ctx)
	if err != nil {
		return fail(err)
	}
	badCVs := 0
	for i := range cvs {
		if cvs[i] != cpuCVs[i] {
			badCVs++
		}
	}
	r["tiles"], r["cvs_wrong"] = len(cvs), badCVs
	gpuRoot, _ := commit.Root(cvs)
	cpuRoot, _ := commit.Root(cpuCVs)
	badTiles, outputSum, err := checkTiles(job, ref, p, cvs)
	if err != nil {
		return fail(err)
	}
	r["tiles_wrong"] = badTiles
	r["root_equal"] = gpuRoot == cpuRoot
	r["root_is_blake3_of_output"] = string(outputSum) == string(gpuRoot[:])
	r["ok"] = badLines == 0 && badCVs == 0 && badTiles == 0 && gpuRoot == cpuRoot && r["root_is_blake3_of_output"] == true
	return r
}

// checkLines compares generated lines, the first, last and a random row of
// A and column of B in every batch, with proof.Line; it returns how many
// it checked and how many were wrong.
func checkLines(job kernels.Job, p proof.Params) (lines, bad int, err error) {
	g, _ := proof.NewGenerator(p)
	liner := job.(interface {
		Line(m proof.Matrix, b, idx uint32) ([]float32, error)
	})
	want := make([]float32, p.K)
	for b := uint32(0); b < p.Batch; b++ {
		for _, ml := range []struct {
			m proof.Matrix
			n uint32
		}{{proof.MatA, p.M}, {proof.MatB, p.N}} {
			for _, idx := range []uint32{0, ml.n - 1, rand.Uint32N(ml.n)} {
				got, err := liner.Line(ml.m, b, idx)
				if err != nil {
					return 0, 0, err
				}
				proof.Line(g, ml.m, b, idx, want)
				lines++
				if !equalPadded(got, want) {
					bad++
				}
			}
		}
	}
	return lines, bad, nil
}

// checkTiles reads the job's whole output, returning its BLAKE3 hash (what
// the root must equal) and how many sampled tiles differ from the
// reference's byte for byte or from their CV.
func checkTiles(job, ref kernels.Job, p proof.Params, cvs []commit.CV) (bad int, sum []byte, err error) {
	h := blake3.New(32, nil)
	gt, ct := make([]byte, p.TileBytes()), make([]byte, p.TileBytes())
	for i := uint64(0); i < p.Tiles(); i++ {
		if err := job.Tile(i, gt); err != nil {
			return 0, nil, err
		}
		h.Write(gt)
		if i%7 == 0 || i == p.Tiles()-1 {
			if err := ref.Tile(i, ct); err != nil {
				return 0, nil, err
			}
			if string(gt) != string(ct) || commit.TileCV(gt, i) != cvs[i] {
				bad++
			}
		}
	}
	return bad, h.Sum(nil), nil
}

// equalPadded reports whether the device line (padded to a multiple of 64
// with zeros) matches want.
func equalPadded(got, want []float32) bool {
	for i, v := range got {
		if (i < len(want) && v != want[i]) || (i >= len(want) && v != 0) {
			return false
		}
	}
	return len(got) >= len(want)
}

// measureSpeed times, each for at least minDur: the GEMM alone, tile hashing
// alone, and whole rounds (allocate, generate, multiply, hash, root, free).
func measureSpeed(ctx context.Context, be *cuda.Backend, p proof.Params, minDur time.Duration) (map[string]any, error) {
	r := map[string]any{"precision": p.Precision.String(), "m": p.M, "n": p.N, "k": p.K, "tile": p.Tile, "ok": true}
	job, err := be.Start(p, kernels.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := kernels.Compute(ctx, job); err != nil { // warm-up, and the stage timings of one round
		job.Close()
		return nil, err
	}
	tm := job.(interface{ Timings() cuda.Timings }).Timings()
	r["stage_ms"] = map[string]float64{"generate": ms(tm.Generate), "multiply": ms(tm.Multiply), "hash": ms(tm.Hash)}
	repeat := func(f func() error) (time.Duration, int, error) {
		start, n := time.Now(), 0
		for time.Since(start) < minDur {
			if err := f(); err != nil {
				return 0, 0, err
			}
			n++
		}
		return time.Since(start), n, nil
	}
	d, n, err := repeat(func() error { return job.Multiply(ctx) })
	if err != nil {
		job.Close()
		return nil, err
	}
	r["gemm_tflops"], r["gemm_iterations"] = p.FLOPs()*float64(n)/d.Seconds()/1e12, n
	d, n, err = repeat(func() error { _, err := job.TileCVs(ctx); return err })
	job.Close()
	if err != nil {
		return nil, err
	}
	r["hash_gbps"], r["hash_iterations"] = float64(p.OutputBytes())*float64(n)/d.Seconds()/1e9, n
	d, n, err = repeat(func() error {
		j, err := be.Start(p, kernels.Options{})
		if err != nil {
			return err
		}
		defer j.Close()
		cvs, err := kernels.Compute(ctx, j)
		if err == nil {
			_, err = commit.Root(cvs)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r["round_tflops"], r["round_ms"], r["round_iterations"] = p.FLOPs()*float64(n)/d.Seconds()/1e12, ms(d)/float64(n), n
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// extremeCase fills every row of A with a(k) and of Bᵀ with b(k); every
// output element must then equal want.
type extremeCase struct {
	name string
	prec proof.Precision
	k    uint32
	a, b func(k int) int32
	want int32
}

// extremeCases put the partial sums at the exactness bound, 2^24, or take
// them close to it and back: tensor-core accumulation must keep every bit.
func extremeCases() []extremeCase {
	const k16, k32 = 8192, 4096
	return []extremeCase{
		{"fp16 all -256 × -8", proof.FP16, k16, func(int) int32 { return -256 }, func(int) int32 { return -8 }, 1 << 24},
		{"fp16 rise to 2^23 and back", proof.FP16, k16,
			func(k int) int32 { return pick(k < k16/2, 255, -256) }, func(int) int32 { return 7 }, k16 / 2 * (255*7 - 256*7)},
		{"fp16 alternating extremes", proof.FP16, k16,
			func(k int) int32 { return pick(k%2 == 0, 255, -256) }, func(int) int32 { return -8 }, k16 / 2 * (-255*8 + 256*8)},
		{"fp32 all -4096 × -1", proof.FP32, k32, func(int) int32 { return -4096 }, func(int) int32 { return -1 }, 1 << 24},
		{"fp32 rise and fall", proof.FP32, k32,
			func(k int) int32 { return pick(k < k32/2, 4095, -4096) }, func(int) int32 { return 1 }, k32 / 2 * (4095 - 4096)},
	}
}

func checkExtreme(ctx context.Context, be kernels.Backend, c extremeCase) map[string]any {
	p := proof.Params{Precision: c.prec, Batch: 1, M: 256, N: 128, K: c.k, Tile: 64, Miner: []byte("gpu-check")}
	r := map[string]any{"case": c.name, "precision": c.prec.String(), "k": c.k, "want": c.want, "ok": false}
	fail := func(err error) map[string]any { r["error"] = err.Error(); return r }
	row := func(f func(int) int32) []int32 {
		out := make([]int32, c.k)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	rows := func(n uint32, f func(int) int32) [][]int32 {
		line, out := row(f), make([][]int32, n)
		for i := range out {
			out[i] = line
		}
		return out
	}
	job, err := be.Start(p, kernels.Options{})
	if err != nil {
		return fail(err)
	}
	defer job.Close()
	setter := job.(interface{ SetInputs(a, bt [][]int32) error })
	if err := setter.SetInputs(rows(p.M, c.a), rows(p.N, c.b)); err != nil {
		return fail(err)
	}
	if err := job.Multiply(ctx); err != nil {
		return fail(err)
	}
	tile, wrong := make([]byte, p.TileBytes()), 0
	var first int32
	for i := uint64(0); i < p.Tiles(); i++ {
		if err := job.Tile(i, tile); err != nil {
			return fail(err)
		}
		for q := 0; q < len(tile); q += 4 {
			if v := int32(binary.LittleEndian.Uint32(tile[q:])); v != c.want {
				if wrong == 0 {
					first = v
				}
				wrong++
			}
		}
	}
	r["elements_wrong"] = wrong
	if wrong > 0 {
		r["first_wrong_value"] = first
	}
	r["ok"] = wrong == 0
	return r
}

func pick(cond bool, x, y int32) int32 {
	if cond {
		return x
	}
	return y
}
