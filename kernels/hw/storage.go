package hw

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"
)

// Storage describes the filesystem holding a directory (a node's home).
type Storage struct {
	// Path is the directory measured, absolute.
	Path string `json:"path"`
	// TotalBytes and FreeBytes are the filesystem's size and the space
	// available to this user (statfs).
	TotalBytes uint64 `json:"total_bytes"`
	FreeBytes  uint64 `json:"free_bytes"`
	// WriteMBps is sequential write throughput in MB/s (10⁶ bytes/s),
	// timed until fsync returns.
	WriteMBps float64 `json:"write_mbps"`
	// ReadMBps is sequential read throughput of the same file in MB/s.
	// Unless CacheDropped, the file's pages may still be in the page cache
	// and this is a memory speed; on tmpfs it always is.
	ReadMBps float64 `json:"read_mbps"`
	// TestBytes is how much was written (and read back).
	TestBytes int64 `json:"test_bytes"`
	// CacheDropped is whether the kernel accepted the request to drop the
	// file from the page cache (posix_fadvise DONTNEED) before reading.
	CacheDropped bool `json:"cache_dropped"`
}

const storageChunk = 1 << 20

// measureStorage fills s for dir: capacity, then the write and read rates
// of a temporary file of up to size bytes (at most a tenth of the free
// space), each phase stopping early after d. The file is always removed.
func measureStorage(ctx context.Context, s *Storage, dir string, size int64, d time.Duration) (notes []string, err error) {
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	s.Path = dir
	size, err = s.capacity(dir, size, note)
	if err != nil {
		return notes, err
	}

	f, err := os.CreateTemp(dir, ".pog-hw-*.tmp")
	if err != nil {
		return notes, err
	}
	defer func() {
		f.Close()
		if rerr := os.Remove(f.Name()); rerr != nil && err == nil {
			err = rerr
		}
	}()
	buf := incompressible(min(size, storageChunk))

	start := time.Now()
	written, err := writeFor(ctx, f, buf, size, d, note)
	if err != nil {
		return notes, err
	}
	if err := f.Sync(); err != nil {
		return notes, err
	}
	s.WriteMBps = rate(written, time.Since(start), 1e6)
	s.TestBytes = written

	if err := dropCache(f); err != nil {
		note("storage read speed may reflect the page cache: %v", err)
	} else {
		s.CacheDropped = true
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return notes, err
	}
	start = time.Now()
	read, err := readFor(ctx, f, buf, written, d, note)
	if err != nil {
		return notes, err
	}
	if read == 0 {
		return notes, errors.New("read back nothing")
	}
	s.ReadMBps = rate(read, time.Since(start), 1e6)
	return notes, nil
}

// capacity fills in the size of dir's filesystem and returns the test
// file's size: size, but at most a tenth of the free space, so the test
// never fills a disk.
func (s *Storage) capacity(dir string, size int64, note func(string, ...any)) (int64, error) {
	fsInfo, err := statFS(dir)
	if err != nil {
		note("storage capacity of %s: %v", dir, err)
		return max(size, 1), nil
	}
	s.TotalBytes, s.FreeBytes = fsInfo.total, fsInfo.free
	if fsInfo.memory {
		note("storage %s is in memory (%s): its speeds are memory speeds", dir, fsInfo.kind)
	}
	if int64(s.FreeBytes/10) < min(size, 1<<20) {
		return 0, fmt.Errorf("only %d bytes free in %s", s.FreeBytes, dir)
	}
	return max(min(size, int64(s.FreeBytes/10)), 1), nil
}

// incompressible returns n random bytes, so compressing filesystems store
// them all; writeFor stamps each chunk with its offset, so deduplicating
// ones do too.
func incompressible(n int64) []byte {
	buf := make([]byte, n)
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	rand.NewChaCha8(seed).Read(buf)
	return buf
}

// writeFor writes size bytes to f in chunks of buf, stopping early once d
// has passed, and returns how many it wrote.
func writeFor(ctx context.Context, f *os.File, buf []byte, size int64, d time.Duration, note func(string, ...any)) (int64, error) {
	var written int64
	start := time.Now()
	for written < size {
		if err := ctx.Err(); err != nil {
			return written, err
		}
		n := min(int64(len(buf)), size-written)
		binary.LittleEndian.PutUint64(buf, uint64(written))
		if _, err := f.Write(buf[:n]); err != nil {
			return written, err
		}
		written += n
		if time.Since(start) >= d && written < size {
			note("storage write stopped after %v at %d of %d bytes", d, written, size)
			break
		}
	}
	return written, nil
}

// readFor reads f's first written bytes into buf, stopping early once d
// has passed, and returns how many it read.
func readFor(ctx context.Context, f *os.File, buf []byte, written int64, d time.Duration, note func(string, ...any)) (int64, error) {
	var read int64
	start := time.Now()
	for read < written {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		n, err := f.Read(buf[:min(int64(len(buf)), written-read)])
		read += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return read, err
		}
		if time.Since(start) >= d && read < written {
			note("storage read stopped after %v at %d of %d bytes", d, read, written)
			break
		}
	}
	return read, nil
}

// fsStat is what statFS reports.
type fsStat struct {
	total, free uint64
	// memory is set for filesystems held in RAM (tmpfs), named by kind.
	memory bool
	kind   string
}
