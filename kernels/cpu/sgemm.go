package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Cache blocking, BLIS-style. The packed kc×nc block of B
// (blockK·blockN·4 bytes = 4 MiB) lives in the shared 32 MiB L3 and is
// shared by all workers; each worker's packed mc×kc block of A (≤ 504 KiB)
// stays in its private 1 MiB L2; the kc×nr micro-panel of B in use
// (32 KiB) is reused from L1/L2 by every mr-row micro-panel of A.
const (
	blockK = 256
	blockM = 504
	blockN = 4096
)

// minWorkPerWorker is the number of multiply-adds below which an extra
// goroutine costs more than it saves.
const minWorkPerWorker = 1 << 18

// kernel is the micro-kernel SgemmNT uses; tests swap it to cover every variant.
var kernel = availableKernels()[0]

// Packing buffers are recycled between calls, in separate pools for the
// shared blocks of B and the per-worker blocks of A so that one kind does
// not keep displacing the other.
var bPool, aPool sync.Pool

// A job's inputs, product and output are recycled between jobs the same
// way (job.Close): a miner runs step after step of similar shapes, and a
// fresh allocation of each (megabytes a step) kept the garbage collector
// running four times a second in a testnet of 22 miners. A recomputed
// tile's much smaller buffers have a pool of their own.
var inPool, prodPool, outPool, tilePool sync.Pool

// getBuf takes a buffer of n elements from pool, or makes one if the
// pooled one is too small; its contents are whatever was there.
func getBuf[T any](pool *sync.Pool, n int) *[]T {
	bp, _ := pool.Get().(*[]T)
	if bp == nil || cap(*bp) < n {
		b := make([]T, n)
		return &b
	}
	*bp = (*bp)[:n]
	return bp
}

// SgemmNT computes C[i*ldc+j] = sum_p A[i*lda+p] * Bt[j*ldb+p] for 0<=i<m,
// 0<=j<n, 0<=p<k, overwriting C. A is m×k row-major, Bt is n×k row-major
// (i.e. B stored column-wise). It runs on `workers` goroutines (<=0 means
// runtime.GOMAXPROCS(0)).
func SgemmNT(m, n, k int, a []float32, lda int, bt []float32, ldb int, c []float32, ldc int, workers int) {
	sgemmNT(m, n, k, a, lda, bt, ldb, c, ldc, workers, nil)
}

// sgemmNT is SgemmNT calling progress, if not nil, with the fraction of
// the product done after each kc×nc block of B (a few dozen calls per
// product, from one worker).
func sgemmNT(m, n, k int, a []float32, lda int, bt []float32, ldb int, c []float32, ldc int, workers int, progress func(float64)) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("cpu: SgemmNT: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	// The assembly kernels do not bounds-check, so validate the extents here.
	if lda < k || ldb < k || ldc < n ||
		len(a) < (m-1)*lda+k || len(bt) < (n-1)*ldb+k || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("cpu: SgemmNT: slice too short or stride too small (m=%d n=%d k=%d lda=%d ldb=%d ldc=%d len=%d,%d,%d)",
			m, n, k, lda, ldb, ldc, len(a), len(bt), len(c)))
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	kern := kernel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(1, m*n*k/minWorkPerWorker))
	if workers == 1 || ceilDiv(m, kern.mr) >= workers {
		gemm(kern, m, n, k, a, lda, bt, ldb, c, ldc, workers, progress)
		return
	}
	// Too few rows to share out: give each worker its own columns instead.
	// Every worker then packs all of A, which is cheap because m is small.
	nTiles := ceilDiv(n, kern.nr)
	workers = min(workers, nTiles)
	var wg sync.WaitGroup
	for t := range workers {
		j0, j1 := t*nTiles/workers*kern.nr, min((t+1)*nTiles/workers*kern.nr, n)
		wg.Go(func() {
			gemm(kern, m, j1-j0, k, a, lda, bt[j0*ldb:], ldb, c[j0:], ldc, 1, nil) // few rows: quick
		})
	}
	wg.Wait()
}

// gemmJob is one product computed by `workers` goroutines that pack each
// kc×nc block of B together, then each multiply it by their own rows of A.
// Packing is thus never duplicated, which matters at moderate sizes where
// it is a noticeable fraction of the run time.
type gemmJob struct {
	kern    microKernel
	m, n, k int
	a       []float32
	lda     int
	bt      []float32
	ldb     int
	c       []float32
	ldc     int
	workers int
	kc, nc  int
	bPack   []float32
	bar     barrier
	// progress, if set, hears worker 0 after each block of B.
	progress func(float64)
}

func gemm(kern microKernel, m, n, k int, a []float32, lda int, bt []float32, ldb int, c []float32, ldc int, workers int,
	progress func(float64)) {
	g := &gemmJob{
		kern: kern, m: m, n: n, k: k,
		a: a, lda: lda, bt: bt, ldb: ldb, c: c, ldc: ldc,
		workers: workers, progress: progress,
		kc: min(k, blockK),
		nc: min(roundUp(n, kern.nr), roundUp(blockN, kern.nr)),
	}
	g.bar.n = int32(workers)
	g.bar.cond.L = &g.bar.mu
	bp := getBuf[float32](&bPool, g.kc*g.nc)
	g.bPack = *bp
	var wg sync.WaitGroup
	for t := 1; t < workers; t++ {
		wg.Go(func() { g.run(t) })
	}
	g.run(0)
	wg.Wait()
	bPool.Put(bp)
}

// run is worker t's share of g: rows [i0, i1) of C and 1/workers of the
// packing of B.
func (g *gemmJob) run(t int) {
	mr, nr := g.kern.mr, g.kern.nr
	mTiles := ceilDiv(g.m, mr)
	i0, i1 := t*mTiles/g.workers*mr, min((t+1)*mTiles/g.workers*mr, g.m)
	// Equal row blocks of at most blockM, so no block is a thin remainder.
	mc := roundUp(ceilDiv(i1-i0, ceilDiv(i1-i0, blockM)), mr)
	bp := getBuf[float32](&aPool, g.kc*mc+mr*nr)
	aPack, tile := (*bp)[:g.kc*mc], (*bp)[g.kc*mc:]

	for jc := 0; jc < g.n; jc += g.nc {
		ncur := min(g.nc, g.n-jc)
		nPanels := ceilDiv(ncur, nr)
		p0, p1 := t*nPanels/g.workers, (t+1)*nPanels/g.workers
		for pc := 0; pc < g.k; pc += g.kc {
			kcur := min(g.kc, g.k-pc)
			accumulate := pc > 0
			if p1 > p0 {
				packPanels(g.bPack[p0*nr*kcur:], g.bt[(jc+p0*nr)*g.ldb+pc:], g.ldb, min(p1*nr, ncur)-p0*nr, kcur, nr)
			}
			g.bar.wait() // the whole block of B is packed
			for ic := i0; ic < i1; ic += mc {
				mcur := min(mc, i1-ic)
				packPanels(aPack, g.a[ic*g.lda+pc:], g.lda, mcur, kcur, mr)
				for jr := 0; jr < ncur; jr += nr {
					g.block(aPack, &g.bPack[jr*kcur], tile, mcur, min(nr, ncur-jr), kcur, ic*g.ldc+jc+jr, accumulate)
				}
			}
			g.bar.wait() // nobody reads the block of B any more
			if t == 0 && g.progress != nil {
				g.progress(float64(jc*g.k+(pc+kcur)*ncur) / float64(g.n*g.k))
			}
		}
	}
	aPool.Put(bp)
}

// block multiplies the packed rows in aPack by one packed kc×nr panel of B
// into the mcur×ncr block of C at offset ci.
func (g *gemmJob) block(aPack []float32, bp *float32, tile []float32, mcur, ncr, kcur, ci int, accumulate bool) {
	mr, nr, ldc := g.kern.mr, g.kern.nr, g.ldc
	for ir := 0; ir < mcur; ir += mr {
		ap := &aPack[ir*kcur]
		mrr := min(mr, mcur-ir)
		if mrr == mr && ncr == nr {
			g.kern.fn(kcur, ap, bp, &g.c[ci], ldc, accumulate)
			ci += mr * ldc
			continue
		}
		// Edge tile: compute the full tile into scratch and copy out the
		// part that lies inside C.
		g.kern.fn(kcur, ap, bp, &tile[0], nr, false)
		for i := range mrr {
			dst := g.c[ci+i*ldc:][:ncr]
			src := tile[i*nr:][:ncr]
			if accumulate {
				for j, v := range src {
					dst[j] += v
				}
			} else {
				copy(dst, src)
			}
		}
		ci += mr * ldc
	}
}

// barrier blocks each of n goroutines in wait until all n have called it.
// Waiters spin briefly, because the phases between barriers are balanced
// and a parked goroutine takes a while to wake, then park so that a
// worker delayed by other load on the machine does not have the others
// burn the CPU it needs.
type barrier struct {
	n       int32
	arrived atomic.Int32
	gen     atomic.Uint32
	mu      sync.Mutex
	cond    sync.Cond
}

const barrierSpins = 1 << 12

func (b *barrier) wait() {
	if b.n == 1 {
		return
	}
	gen := b.gen.Load()
	if b.arrived.Add(1) == b.n {
		b.arrived.Store(0)
		b.mu.Lock()
		b.gen.Add(1)
		b.cond.Broadcast()
		b.mu.Unlock()
		return
	}
	for range barrierSpins {
		if b.gen.Load() != gen {
			return
		}
	}
	b.mu.Lock()
	for b.gen.Load() == gen {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// packPanels copies rows×kc elements of src (row stride ld) into dst as
// consecutive w-row panels, each stored k-major (dst[panel*w*kc + p*w + r]),
// zero-padding the last panel to w rows.
func packPanels(dst, src []float32, ld, rows, kc, w int) {
	// Copying a cache line's worth of k from each of the w rows in turn,
	// rather than one whole row after another, keeps w independent memory
	// streams in flight; packing operands that come from DRAM is otherwise
	// latency-bound.
	const kStep = 16
	for r0 := 0; r0 < rows; r0 += w {
		panel := dst[r0*kc : (r0+w)*kc]
		rw := min(w, rows-r0)
		if rw < w {
			clear(panel)
		}
		for p0 := 0; p0 < kc; p0 += kStep {
			pn := min(kStep, kc-p0)
			for r := range rw {
				row := src[(r0+r)*ld+p0:][:pn]
				// Every store lands inside panel (p0+i < kc, r < w); raw
				// pointer arithmetic avoids a bounds check per element.
				out := unsafe.Pointer(&panel[p0*w+r])
				for i, v := range row {
					*(*float32)(unsafe.Add(out, i*w*4)) = v
				}
			}
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }
