package store

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// BenchmarkPutRound is one synced round record on the OS's disk, head
// update included (BENCHMARKS.md).
func BenchmarkPutRound(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "store"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range b.N {
		if err := s.PutRound(recordtest.Audit(1, uint64(i), "miner")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteHead is the head update alone: write, fsync, rename, fsync
// of the directory.
func BenchmarkWriteHead(b *testing.B) {
	dir := b.TempDir()
	h := newHead()
	for i := range b.N {
		h.Rounds.Count = uint64(i)
		if err := writeHead(vfs.Default, dir, h); err != nil {
			b.Fatal(err)
		}
	}
}
