package cpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

func init() {
	kernels.Register("cpu", func() (kernels.Backend, error) { return Backend{}, nil })
}

// Backend runs challenges on the host CPU with SgemmNT.
type Backend struct{}

// Name implements kernels.Backend.
func (Backend) Name() string { return "cpu" }

// Devices implements kernels.Backend: the host is one device.
func (Backend) Devices() int { return 1 }

// MemoryNeeded counts A and Bᵀ for every batch, one batch's float32 product,
// and the serialised output.
func (Backend) MemoryNeeded(p proof.Params) uint64 {
	b, m, k, n := uint64(p.Batch), uint64(p.M), uint64(p.K), uint64(p.N)
	return 4 * (b*m*k + b*n*k + m*n + b*m*n)
}

// Start implements kernels.Backend.
func (be Backend) Start(p proof.Params, opts kernels.Options) (kernels.Job, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := kernels.CheckMemory("cpu", p, be.MemoryNeeded(p), opts.MemoryLimit); err != nil {
		return nil, err
	}
	g, err := proof.NewGenerator(p)
	if err != nil {
		return nil, err
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Progress == nil {
		opts.Progress = func(kernels.Stage, float64) {}
	}
	return &job{p: p, g: g, opts: opts}, nil
}

type job struct {
	p    proof.Params
	g    *proof.Generator
	opts kernels.Options
	a    *[]float32 // batch × M × K, row-major (from inPool)
	bt   *[]float32 // batch × N × K: column j of B_b is row j here
	out  *[]byte    // tile-major int32 output (from outPool)
}

// parallel runs f(i) for i in [0, n) on the job's workers, stopping early
// when ctx is done, and reports the fraction done.
func (j *job) parallel(ctx context.Context, n int, f func(i int), report func(done float64)) error {
	var next, done int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < min(j.opts.Workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
				mu.Lock()
				done++
				report(float64(done) / float64(n))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

func (j *job) Generate(ctx context.Context) error {
	j.opts.Progress(kernels.StageGenerate, 0)
	p := j.p
	k := int(p.K)
	rowsA, rowsB := int(p.Batch*p.M), int(p.Batch*p.N)
	j.a, j.bt = getBuf[float32](&inPool, rowsA*k), getBuf[float32](&inPool, rowsB*k)
	a, bt := *j.a, *j.bt // every line is overwritten
	const linesPerTask = 64
	tasks := (rowsA + rowsB + linesPerTask - 1) / linesPerTask
	return j.parallel(ctx, tasks, func(t int) {
		for l := t * linesPerTask; l < min((t+1)*linesPerTask, rowsA+rowsB); l++ {
			if l < rowsA {
				proof.Line(j.g, proof.MatA, uint32(l/int(p.M)), uint32(l%int(p.M)), a[l*k:(l+1)*k])
			} else {
				r := l - rowsA
				proof.Line(j.g, proof.MatB, uint32(r/int(p.N)), uint32(r%int(p.N)), bt[r*k:(r+1)*k])
			}
		}
	}, func(f float64) { j.opts.Progress(kernels.StageGenerate, f) })
}

// gemmShare is the part of Multiply's progress given to the product; the
// rest is its conversion to tiles.
const gemmShare = 0.95

func (j *job) Multiply(ctx context.Context) error {
	if j.a == nil {
		return fmt.Errorf("cpu: Multiply before Generate")
	}
	j.opts.Progress(kernels.StageMultiply, 0)
	p := j.p
	m, k, n, t := int(p.M), int(p.K), int(p.N), int(p.Tile)
	if j.out == nil {
		j.out = getBuf[byte](&outPool, int(p.OutputBytes())) // every tile is overwritten
	}
	out, a, bt := *j.out, *j.a, *j.bt
	cp := getBuf[float32](&prodPool, m*n) // SgemmNT overwrites it
	defer prodPool.Put(cp)
	c := *cp
	tileBytes, tilesPerMatrix := p.TileBytes(), int(p.TilesPerMatrix())
	for b := 0; b < int(p.Batch); b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The product is most of the stage's time: the conversion below
		// is O(m·n) beside its O(m·n·k).
		sgemmNT(m, n, k, a[b*m*k:], k, bt[b*n*k:], k, c, n, j.opts.Workers, func(f float64) {
			j.opts.Progress(kernels.StageMultiply, (float64(b)+gemmShare*f)/float64(p.Batch))
		})
		// Every value is an exact integer below 2^24 (proof.Precision.MaxK),
		// so the conversion is exact; tile-major order makes each tile a
		// contiguous, aligned BLAKE3 subtree.
		err := j.parallel(ctx, m/t, func(I int) {
			for J := 0; J < n/t; J++ {
				tile := out[(b*tilesPerMatrix+I*(n/t)+J)*tileBytes:][:tileBytes]
				for r := 0; r < t; r++ {
					putInt32s(tile[4*r*t:][:4*t], c[(I*t+r)*n+J*t:][:t])
				}
			}
		}, func(f float64) {
			j.opts.Progress(kernels.StageMultiply, (float64(b)+gemmShare+(1-gemmShare)*f)/float64(p.Batch))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// putInt32s writes src, exact integers, to dst as little-endian int32s.
// dst is sliced once, not per value: with the testnet's short K the
// conversion is not small beside the product (BENCHMARKS.md).
func putInt32s(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(int32(v)))
	}
}

func (j *job) TileCVs(ctx context.Context) ([]commit.CV, error) {
	if j.out == nil {
		return nil, fmt.Errorf("cpu: TileCVs before Multiply")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j.opts.Progress(kernels.StageHash, 0)
	cvs, err := commit.TileCVs(*j.out, j.p.TileBytes(), j.opts.Workers)
	j.opts.Progress(kernels.StageHash, 1)
	return cvs, err
}

func (j *job) Tile(i uint64, dst []byte) error {
	tb := uint64(j.p.TileBytes())
	switch {
	case j.out == nil:
		return fmt.Errorf("cpu: Tile before Multiply")
	case i >= j.p.Tiles():
		return fmt.Errorf("cpu: tile %d out of range (%d tiles)", i, j.p.Tiles())
	case uint64(len(dst)) != tb:
		return fmt.Errorf("cpu: tile buffer of %d bytes, want %d", len(dst), tb)
	}
	copy(dst, (*j.out)[i*tb:(i+1)*tb])
	return nil
}

// Close returns the job's buffers to the pools; the job must not be used
// after it.
func (j *job) Close() error {
	for _, b := range []*[]float32{j.a, j.bt} {
		if b != nil {
			inPool.Put(b)
		}
	}
	if j.out != nil {
		outPool.Put(j.out)
	}
	j.a, j.bt, j.out = nil, nil, nil
	return nil
}
