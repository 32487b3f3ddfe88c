package store

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// TestBytes: a store's size grows by each record's encoding and its key,
// and stays the same across a reopen, which replays and flushes its log.
func TestBytes(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	empty, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r := recordtest.Round(3, 7, "miner")
	if err := s.PutRound(r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if want := empty + int64(len(recordKey(r.Epoch, r.Round, r.Miner))+len(record.EncodeRound(r))); got < want {
		t.Fatalf("%d bytes after a record, want at least %d (%d empty)", got, want, empty)
	}
	closeStore(t, s)
	s = openMem(t, fs)
	defer closeStore(t, s)
	if again, err := s.Bytes(); err != nil || again != got {
		t.Fatalf("%d bytes after a reopen (%v), want %d", again, err, got)
	}
}
