package hw

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// RAM describes host memory.
type RAM struct {
	// TotalBytes is physical memory (sysinfo(2) on Linux).
	TotalBytes uint64 `json:"total_bytes"`
	// CopyGBps is the rate, in GB/s (10⁹ bytes/s), at which all threads
	// together copy a buffer much larger than the CPU caches. Each byte is
	// read once and written once, so the memory traffic is about twice
	// this (STREAM's Copy counts both). On CPUs whose combined last-level
	// caches approach the buffer size the figure is inflated.
	CopyGBps float64 `json:"copy_gbps"`
	// BufferBytes is the size of the buffer copied (two are allocated).
	BufferBytes int64 `json:"buffer_bytes"`
}

// measureRAM times copies of a buffer of size bytes (capped at an eighth
// of physical memory) with one goroutine per CPU, for about d after one
// untimed pass that faults the pages in.
func measureRAM(ctx context.Context, r *RAM, size int64, d time.Duration) error {
	if r.TotalBytes > 0 {
		size = min(size, int64(r.TotalBytes/16))
	}
	const align = 4096
	if size > align {
		size &^= align - 1
	}
	size = max(size, 1)
	src, dst := make([]byte, size), make([]byte, size)
	defer func() {
		// Hand the buffers back to the OS: a node keeps running after this.
		src, dst = nil, nil
		debug.FreeOSMemory()
	}()
	for i := range src {
		src[i] = byte(i*7 + i>>12)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), int(size/(1<<20))))
	chunk := (size + int64(workers) - 1) / int64(workers)
	chunk = (chunk + align - 1) &^ (align - 1)
	pass := func() {
		var wg sync.WaitGroup
		for lo := int64(0); lo < size; lo += chunk {
			hi := min(lo+chunk, size)
			wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
		}
		wg.Wait()
	}
	pass() // faults dst in and warms up
	var copied int64
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		pass()
		copied += size
		if time.Since(start) >= d {
			break
		}
	}
	r.CopyGBps = rate(copied, time.Since(start), 1e9)
	r.BufferBytes = size
	return nil
}
