package store

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestRoundMark: the mark only rises, survives a reopen, and a read-only
// store reads it but refuses to raise it.
func TestRoundMark(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	if m, err := s.RoundMark(); err != nil || m != 0 {
		t.Fatalf("new store: mark %d, %v; want 0", m, err)
	}
	for _, n := range []uint64{1024, 500, 2048} {
		if err := s.RaiseRoundMark(n); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	ro, err := Open(testDir, Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, ro)
	if m, err := ro.RoundMark(); err != nil || m != 2048 {
		t.Fatalf("after reopen: mark %d, %v; want 2048 (a lower raise leaves it)", m, err)
	}
	if err := ro.RaiseRoundMark(4096); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("raise on a read-only store: %v, want ErrReadOnly", err)
	}
}

// TestRoundMarkCorrupt: a mark value that is not 8 bytes is corruption,
// reported as such, not read as some number.
func TestRoundMarkCorrupt(t *testing.T) {
	fs := vfs.NewMem()
	closeStore(t, openMem(t, fs))
	rawSet(t, fs, roundMarkKey, []byte{1, 2, 3})
	s := openMem(t, fs)
	defer closeStore(t, s)
	if m, err := s.RoundMark(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a 3-byte mark: %d, %v; want ErrCorrupt", m, err)
	}
}
