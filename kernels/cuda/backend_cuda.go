//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"

	_ "github.com/pog-network/pog/kernels/cuda/internal/preinit" // must initialise before gorgonia.org/cu
	"gorgonia.org/cu"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

func init() {
	kernels.Register("cuda", func() (kernels.Backend, error) { return Open(ConfigFromEnv()) })
}

// Config selects the GEMM implementation.
type Config struct {
	// GEMM is "auto" (cuBLAS when one loads, else the own kernels), "own"
	// or "cublas" (fail without one).
	GEMM string
	// CUBLAS is the libcublas path to load; empty tries the usual sonames.
	CUBLAS string
	// PanelBytes bounds the float32 panel cuBLAS writes before conversion
	// (0: 512 MiB). Checks set it small to exercise several panels.
	PanelBytes uint64
}

// ConfigFromEnv reads POG_CUDA_GEMM and POG_CUBLAS.
func ConfigFromEnv() Config {
	return Config{GEMM: os.Getenv("POG_CUDA_GEMM"), CUBLAS: os.Getenv("POG_CUBLAS")}
}

// Backend runs jobs on every visible GPU of compute capability 8.0 or newer,
// one primary context and stream per device.
type Backend struct {
	devs       []*device
	blas       *cublasLib
	panelBytes uint64
	notes      []string
}

// Open starts a worker per device, loads the PTX and, per cfg, cuBLAS. It
// fails with a clear error when no GPU is usable.
func Open(cfg Config) (*Backend, error) {
	switch cfg.GEMM {
	case "", "auto", "own", "cublas":
	default:
		return nil, fmt.Errorf("cuda: GEMM %q: want auto, own or cublas", cfg.GEMM)
	}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if n == 0 {
		return nil, errors.New("cuda: the driver sees no GPU")
	}
	b := &Backend{panelBytes: cfg.PanelBytes}
	if b.panelBytes == 0 {
		b.panelBytes = scratchBudget
	}
	if cfg.GEMM != "own" {
		if b.blas, err = loadCublas(cfg.CUBLAS); err != nil {
			if cfg.GEMM == "cublas" {
				return nil, fmt.Errorf("cuda: %w", err)
			}
			b.notes = append(b.notes, fmt.Sprintf("%v; using pog's own GEMM kernels", err))
		}
	}
	for i := 0; i < n; i++ {
		d, note, err := openDevice(i, b.blas, cfg.GEMM == "cublas")
		if note != "" {
			b.notes = append(b.notes, note)
		}
		if err != nil {
			b.notes = append(b.notes, fmt.Sprintf("device %d unusable: %v", i, err))
			continue
		}
		b.devs = append(b.devs, d)
	}
	if len(b.devs) == 0 {
		return nil, fmt.Errorf("cuda: no usable GPU: %s", strings.Join(b.notes, "; "))
	}
	return b, nil
}

// Name implements kernels.Backend.
func (*Backend) Name() string { return "cuda" }

// Devices implements kernels.Backend.
func (b *Backend) Devices() int { return len(b.devs) }

// Notes says what Open could not use (cuBLAS, devices), for logs.
func (b *Backend) Notes() []string { return b.notes }

// DeviceInfo describes device i for reports.
func (b *Backend) DeviceInfo(i int) DeviceInfo { return b.dev(i).info }

// dev maps any device number onto the usable devices.
func (b *Backend) dev(i int) *device {
	n := len(b.devs)
	return b.devs[(i%n+n)%n]
}

// DeviceInfo is what a job's device is.
type DeviceInfo struct {
	Ordinal      int    `json:"ordinal"`
	Name         string `json:"name"`
	UUID         string `json:"uuid"`
	ComputeMajor int    `json:"compute_major"`
	ComputeMinor int    `json:"compute_minor"`
	SMs          int    `json:"sms"`
	MemoryBytes  int64  `json:"memory_bytes"`
	PTXArch      int    `json:"ptx_arch"`
	Driver       int    `json:"driver_version"`
	CUBLAS       int    `json:"cublas_version"` // 0: own kernels
	CUBLASPath   string `json:"cublas_path,omitempty"`
}

// Close stops the device workers; jobs must be closed first.
func (b *Backend) Close() {
	for _, d := range b.devs {
		d.do(func() error {
			if d.blas != nil {
				d.blas.close()
			}
			d.stream.Destroy()
			return errors.Join(d.drain(), d.mod.Unload())
		})
		close(d.work)
	}
	b.devs = nil
}

// MemoryNeeded implements kernels.Backend, for the GEMM the first device
// would use.
func (b *Backend) MemoryNeeded(p proof.Params) uint64 {
	return planLayout(p, b.devs[0].panelBytes(b.panelBytes)).total()
}

// Start implements kernels.Backend: it allocates the job's device memory on
// device opts.Device, failing clearly if the challenge does not fit.
func (b *Backend) Start(p proof.Params, opts kernels.Options) (kernels.Job, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := b.dev(opts.Device)
	l := planLayout(p, d.panelBytes(b.panelBytes))
	if err := kernels.CheckMemory("cuda", p, l.total(), opts.MemoryLimit); err != nil {
		return nil, err
	}
	g, err := proof.NewGenerator(p)
	if err != nil {
		return nil, err
	}
	if opts.Progress == nil {
		opts.Progress = func(kernels.Stage, float64) {}
	}
	j := &job{d: d, p: p, l: l, g: g, opts: opts}
	if err := d.do(j.alloc); err != nil {
		d.do(j.free)
		return nil, err
	}
	return j, nil
}

// device owns one GPU: a goroutine locked to an OS thread on which the
// primary context is current runs every CUDA call for it.
type device struct {
	info   DeviceInfo
	work   chan func()
	mod    cu.Module
	fn     map[string]cu.Function
	stream cu.Stream
	blas   *cublasHandle

	// pool keeps freed buffers by size for the next job of the same shape:
	// cuMemAlloc and cuMemFree of gigabytes cost milliseconds (and cuMemFree
	// synchronises), which a round would otherwise pay every time. Used only
	// on the device's thread.
	pool    map[uint64][]cu.DevicePtr
	pooled  uint64
	poolCap uint64
}

// take returns a buffer of n bytes (a multiple of align) from the pool or a
// new allocation.
func (d *device) take(n uint64) (cu.DevicePtr, error) {
	if l := d.pool[n]; len(l) > 0 {
		d.pool[n], d.pooled = l[:len(l)-1], d.pooled-n
		return l[len(l)-1], nil
	}
	return cu.MemAlloc(int64(n))
}

// put returns a buffer to the pool, or frees it once the pool holds poolCap.
func (d *device) put(p cu.DevicePtr, n uint64) error {
	if d.pooled+n > d.poolCap {
		return cu.MemFree(p)
	}
	d.pool[n] = append(d.pool[n], p)
	d.pooled += n
	return nil
}

// drain frees every pooled buffer, for a job that needs the memory.
func (d *device) drain() error {
	var errs []error
	for n, l := range d.pool {
		for _, p := range l {
			errs = append(errs, cu.MemFree(p))
		}
		delete(d.pool, n)
	}
	d.pooled = 0
	return errors.Join(errs...)
}

// openDevice starts device ordinal's worker and loads the kernels. A cuBLAS
// handle that cannot be created there is an error only when cuBLAS is
// required; otherwise the device uses the own kernels and note says why.
func openDevice(ordinal int, blas *cublasLib, needBLAS bool) (d *device, note string, err error) {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, "", err
	}
	d = &device{work: make(chan func()), fn: map[string]cu.Function{}, pool: map[uint64][]cu.DevicePtr{}}
	d.info.Ordinal = ordinal
	d.info.Name, _ = dev.Name()
	if u, err := dev.UUID(); err == nil {
		d.info.UUID = "GPU-" + u.String() // NVML's spelling, to match kernels/hw
	}
	if d.info.ComputeMajor, d.info.ComputeMinor, err = dev.ComputeCapability(); err != nil {
		return nil, "", err
	}
	d.info.SMs, _ = dev.Attribute(cu.MultiprocessorCount)
	d.info.MemoryBytes, _ = dev.TotalMem()
	d.poolCap = uint64(d.info.MemoryBytes) / 2
	d.info.Driver = cu.Version()
	ptx, arch, err := ptxFor(d.info.ComputeMajor, d.info.ComputeMinor)
	if err != nil {
		return nil, "", err
	}
	d.info.PTXArch = arch
	ready := make(chan error)
	go d.loop(dev, ready)
	if err := <-ready; err != nil {
		return nil, "", err
	}
	err = d.do(func() error {
		if d.mod, err = cu.LoadData(ptx); err != nil {
			return fmt.Errorf("loading sm_%d PTX: %w", arch, err)
		}
		for _, name := range kernelNames {
			f, err := d.mod.Function(name)
			if err != nil {
				return fmt.Errorf("kernel %s: %w", name, err)
			}
			d.fn[name] = f
		}
		if d.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
			return err
		}
		if blas == nil {
			return nil
		}
		h, err := blas.newHandle(d.stream)
		switch {
		case err != nil && needBLAS:
			return err
		case err != nil:
			note = fmt.Sprintf("device %d: %v; using pog's own GEMM kernels", ordinal, err)
		default:
			d.blas = h
			d.info.CUBLAS, d.info.CUBLASPath = h.version, blas.path
		}
		return nil
	})
	if err != nil {
		close(d.work)
		return nil, "", err
	}
	return d, note, nil
}

// panelBytes is the cuBLAS panel budget on this device, 0 for the own
// kernels.
func (d *device) panelBytes(budget uint64) uint64 {
	if d.blas == nil {
		return 0
	}
	return budget
}

func (d *device) loop(dev cu.Device, ready chan<- error) {
	runtime.LockOSThread() // a CUDA context is current per OS thread
	ctx, err := dev.RetainPrimaryCtx()
	if err == nil {
		err = cu.SetCurrentContext(ctx)
	}
	ready <- err
	if err != nil {
		return
	}
	for f := range d.work {
		f()
	}
	dev.ReleasePrimaryCtx()
}

// do runs f on the device's thread and returns its error.
func (d *device) do(f func() error) error {
	errc := make(chan error, 1)
	d.work <- func() { errc <- f() }
	return <-errc
}

// run queues a kernel launch on the device's stream; it must run inside do.
func (d *device) run(k launch) error {
	ptrs := make([]unsafe.Pointer, len(k.args))
	for i := range k.args {
		ptrs[i] = unsafe.Pointer(&k.args[i])
	}
	if err := d.fn[k.kernel].Launch(k.gx, k.gy, k.gz, k.block, 1, 1, 0, d.stream, ptrs); err != nil {
		return fmt.Errorf("launching %s (%d,%d,%d)×%d: %w", k.kernel, k.gx, k.gy, k.gz, k.block, err)
	}
	return nil
}

// runAll queues launches in order.
func (d *device) runAll(ks []launch) error {
	for _, k := range ks {
		if err := d.run(k); err != nil {
			return err
		}
	}
	return nil
}

// Timings are a job's stages measured with CUDA events on its stream: device
// time, without the host's launch and copy overheads.
type Timings struct {
	Generate, Multiply, Hash time.Duration
}

type job struct {
	d    *device
	p    proof.Params
	l    layout
	g    *proof.Generator
	opts kernels.Options

	a, bt, out, scratch, cv, cv2 cu.DevicePtr
	ev                           [4]cu.Event // before generate, after generate, multiply, hash
	generated, multiplied        bool
	times                        Timings
}

// buffers lists the job's device buffers and their sizes.
func (j *job) buffers() []struct {
	p *cu.DevicePtr
	n uint64
} {
	return []struct {
		p *cu.DevicePtr
		n uint64
	}{{&j.a, j.l.aBytes}, {&j.bt, j.l.bBytes}, {&j.out, j.l.outBytes}, {&j.scratch, j.l.scratchBytes}, {&j.cv, j.l.cvBytes}, {&j.cv2, j.l.cv2Bytes}}
}

func (j *job) alloc() error {
	free, _, err := cu.MemInfo()
	if err != nil {
		return err
	}
	need := j.l.total()
	if uint64(free)+j.d.pooled < need {
		return fitError(fmt.Sprintf("device %d (%s)", j.d.info.Ordinal, j.d.info.Name), j.p, need, uint64(free)+j.d.pooled)
	}
	if uint64(free) < need {
		if err := j.d.drain(); err != nil {
			return err
		}
	}
	for _, b := range j.buffers() {
		if b.n == 0 {
			continue
		}
		if *b.p, err = j.d.take(roundup(b.n, align)); err != nil {
			return fmt.Errorf("cuda: allocating %d bytes on device %d: %w", b.n, j.d.info.Ordinal, err)
		}
	}
	for i := range j.ev {
		if j.ev[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return err
		}
	}
	return nil
}

func (j *job) free() error {
	var errs []error
	for _, b := range j.buffers() {
		if *b.p != 0 {
			errs = append(errs, j.d.put(*b.p, roundup(b.n, align)))
			*b.p = 0
		}
	}
	for i := range j.ev {
		if j.ev[i] != (cu.Event{}) {
			errs = append(errs, cu.DestroyEvent(&j.ev[i]))
		}
	}
	return errors.Join(errs...)
}

// elapsed is the device time between two recorded events.
func elapsed(a, b cu.Event) time.Duration {
	ms, err := a.Elapsed(b)
	if err != nil {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func (j *job) Generate(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.opts.Progress(kernels.StageGenerate, 0)
	err := j.d.do(func() error {
		if err := j.ev[0].Record(j.d.stream); err != nil {
			return err
		}
		if err := j.d.runAll(j.l.generateLaunches(j.g, j.bufs(), j.d.info.SMs)); err != nil {
			return err
		}
		if err := j.ev[1].Record(j.d.stream); err != nil {
			return err
		}
		return j.d.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("cuda: generate: %w", err)
	}
	j.generated = true
	j.opts.Progress(kernels.StageGenerate, 1)
	return nil
}

// bufs is the job's buffers as kernel arguments.
func (j *job) bufs() buffers {
	return buffers{uint64(j.a), uint64(j.bt), uint64(j.out), uint64(j.scratch), uint64(j.cv), uint64(j.cv2)}
}

func (j *job) Multiply(ctx context.Context) error {
	if !j.generated {
		return errors.New("cuda: Multiply before Generate")
	}
	j.opts.Progress(kernels.StageMultiply, 0)
	var err error
	if j.d.blas != nil {
		err = j.multiplyCublas(ctx)
	} else {
		err = j.d.do(func() error { return j.multiplyOwn(ctx) })
	}
	if err != nil {
		return fmt.Errorf("cuda: multiply: %w", err)
	}
	j.multiplied = true
	j.opts.Progress(kernels.StageMultiply, 1)
	return nil
}

// multiplyOwn runs the project's GEMM kernel over every batch; the kernels
// cannot be interrupted, so ctx is checked before they are queued.
func (j *job) multiplyOwn(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := j.d.runAll(j.l.gemmLaunches(j.bufs())); err != nil {
		return err
	}
	if err := j.ev[2].Record(j.d.stream); err != nil {
		return err
	}
	return j.d.stream.Synchronize()
}

// multiplyCublas multiplies panel by panel into the float32 scratch with
// cuBLAS and converts each panel to tile-major int32. It checks ctx between
// batches.
func (j *job) multiplyCublas(ctx context.Context) error {
	p := j.p
	panels := j.l.panels(j.bufs())
	for b := uint64(0); b < uint64(p.Batch); b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := j.d.do(func() error {
			for _, pn := range panels {
				if pn.b != b {
					continue
				}
				if err := j.d.blas.gemmTN(p.Precision == proof.FP16, int(pn.rows), int(p.N), int(j.l.kp),
					cu.DevicePtr(pn.a), cu.DevicePtr(pn.bt), j.scratch); err != nil {
					return err
				}
				if err := j.d.run(pn.convert); err != nil {
					return err
				}
			}
			if b+1 < uint64(p.Batch) {
				return nil
			}
			if err := j.ev[2].Record(j.d.stream); err != nil {
				return err
			}
			return j.d.stream.Synchronize()
		})
		if err != nil {
			return err
		}
		j.opts.Progress(kernels.StageMultiply, float64(b+1)/float64(p.Batch))
	}
	return nil
}

func (j *job) TileCVs(ctx context.Context) ([]commit.CV, error) {
	if !j.multiplied {
		return nil, errors.New("cuda: TileCVs before Multiply")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j.opts.Progress(kernels.StageHash, 0)
	cvs := make([]commit.CV, j.p.Tiles())
	err := j.d.do(func() error {
		ks, result := j.l.hashLaunches(j.bufs())
		if err := j.d.runAll(ks); err != nil {
			return err
		}
		if err := j.ev[3].Record(j.d.stream); err != nil {
			return err
		}
		if err := j.d.stream.Synchronize(); err != nil {
			return err
		}
		j.times = Timings{Generate: elapsed(j.ev[0], j.ev[1]), Multiply: elapsed(j.ev[1], j.ev[2]), Hash: elapsed(j.ev[2], j.ev[3])}
		return cu.MemcpyDtoH(unsafe.Pointer(&cvs[0]), cu.DevicePtr(result), int64(32*len(cvs)))
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: hashing tiles: %w", err)
	}
	j.opts.Progress(kernels.StageHash, 1)
	return cvs, nil
}

// Timings returns the stages' device times, valid after TileCVs.
func (j *job) Timings() Timings { return j.times }

func (j *job) Tile(i uint64, dst []byte) error {
	tb := uint64(j.p.TileBytes())
	switch {
	case !j.multiplied:
		return errors.New("cuda: Tile before Multiply")
	case i >= j.p.Tiles():
		return fmt.Errorf("cuda: tile %d out of range (%d tiles)", i, j.p.Tiles())
	case uint64(len(dst)) != tb:
		return fmt.Errorf("cuda: tile buffer of %d bytes, want %d", len(dst), tb)
	}
	return j.d.do(func() error {
		return cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), j.out+cu.DevicePtr(i*tb), int64(tb))
	})
}

// SetInputs replaces the generated inputs of batch 0 with a (M rows of K)
// and bt (N rows of K), so a check can multiply chosen values: the extremes
// of a class, where fp32 exactness on tensor cores is tightest.
func (j *job) SetInputs(a, bt [][]int32) error {
	if uint32(len(a)) != j.p.M || uint32(len(bt)) != j.p.N {
		return fmt.Errorf("cuda: SetInputs with %d×%d rows, want %d×%d", len(a), len(bt), j.p.M, j.p.N)
	}
	ea, eb := encodeInputs(a, j.l.kp, j.l.elem), encodeInputs(bt, j.l.kp, j.l.elem)
	err := j.d.do(func() error {
		if err := cu.MemcpyHtoD(j.a, unsafe.Pointer(&ea[0]), int64(len(ea))); err != nil {
			return err
		}
		return cu.MemcpyHtoD(j.bt, unsafe.Pointer(&eb[0]), int64(len(eb)))
	})
	if err == nil {
		j.generated = true
	}
	return err
}

// Line copies line idx of matrix m in batch b back from the device, as
// float32, for checks against proof.Line.
func (j *job) Line(m proof.Matrix, b, idx uint32) ([]float32, error) {
	if !j.generated {
		return nil, errors.New("cuda: Line before Generate")
	}
	base, rows := j.a, j.l.mp
	if m == proof.MatB {
		base, rows = j.bt, j.l.np
	}
	raw := make([]byte, j.l.kp*j.l.elem)
	off := (uint64(b)*rows + uint64(idx)) * j.l.kp * j.l.elem
	if err := j.d.do(func() error {
		return cu.MemcpyDtoH(unsafe.Pointer(&raw[0]), base+cu.DevicePtr(off), int64(len(raw)))
	}); err != nil {
		return nil, err
	}
	return decodeLine(raw, j.l.elem), nil
}

func (j *job) Close() error {
	return j.d.do(j.free)
}
