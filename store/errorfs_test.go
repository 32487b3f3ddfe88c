package store

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// nthFault injects err into the n-th operation (from 0) that match picks,
// once, while armed.
type nthFault struct {
	match    func(errorfs.Op) bool
	n        int64
	err      error
	armed    atomic.Bool
	seen     atomic.Int64
	injected atomic.Bool
}

func (f *nthFault) String() string { return "nthFault" }

func (f *nthFault) MaybeError(op errorfs.Op) error {
	if !f.armed.Load() || !f.match(op) || f.seen.Add(1)-1 != f.n {
		return nil
	}
	f.injected.Store(true)
	return f.err
}

func isSync(k errorfs.OpKind) bool {
	return k == errorfs.OpFileSync || k == errorfs.OpFileSyncData || k == errorfs.OpFileSyncTo
}

var faultKinds = map[string]func(errorfs.Op) bool{
	"write": func(op errorfs.Op) bool { return op.Kind.ReadOrWrite() == errorfs.OpIsWrite && !isSync(op.Kind) },
	"sync":  func(op errorfs.Op) bool { return isSync(op.Kind) },
	"read":  func(op errorfs.Op) bool { return op.Kind == errorfs.OpFileRead || op.Kind == errorfs.OpFileReadAt },
}

// acked is what a workload was told is stored.
type acked struct {
	rounds []*RoundRecord
	epochs map[uint64][]byte
}

// workload runs every store call, writes and reads, until one fails;
// it returns that error (nil if none did) and what was acknowledged.
func workload(s *Store, a *acked) error {
	for j := uint64(0); j < 4; j++ {
		r := recordtest.Audit(10+j, j, "miner")
		if err := s.PutRound(r); err != nil {
			return err
		}
		a.rounds = append(a.rounds, r)
		env := []byte(fmt.Sprintf("epoch record %d", j))
		if err := s.PutEpochRecord(10+j, []byte("v"), env); err != nil {
			return err
		}
		a.epochs[10+j] = env
		if _, err := s.PutAnnounce(10+j, []byte("miner"), []byte("announce")); err != nil {
			return err
		}
		if _, err := s.Round(1, 1, []byte("old")); err != nil {
			return err
		}
		if _, err := s.EpochRecord(1, []byte("v")); err != nil {
			return err
		}
		for _, err := range s.Rounds(0, ^uint64(0)) {
			if err != nil {
				return err
			}
		}
		for _, err := range s.EpochRecords(0, ^uint64(0)) {
			if err != nil {
				return err
			}
		}
		for _, err := range s.Announces(10 + j) {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// TestFaultEveryCallSite fails, in turn, each write, each sync and each
// read the store's calls make, on a store whose older records are in an
// sstable. Each fault must surface as an error wrapping the injected one
// (never a panic), stop the store (Failed), and lose no record a call
// acknowledged: reopened without faults, the store holds all of them.
func TestFaultEveryCallSite(t *testing.T) {
	for kind, match := range faultKinds {
		t.Run(kind, func(t *testing.T) {
			for n := int64(0); ; n++ {
				if done := faultRun(t, match, n); done {
					t.Logf("%d %s operations, each failed once", n, kind)
					return
				}
				if n > 2000 {
					t.Fatal("the workload never ends without a fault")
				}
			}
		})
	}
}

// faultRun injects a fault into the n-th matching operation; it reports
// whether the workload finished without reaching it.
func faultRun(t *testing.T, match func(errorfs.Op) bool, n int64) bool {
	t.Helper()
	mem := vfs.NewMem()
	old := recordtest.Round(1, 1, "old")
	s := openMem(t, mem)
	if err := s.PutRound(old); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEpochRecord(1, []byte("v"), []byte("old epoch record")); err != nil {
		t.Fatal(err)
	}
	if err := s.Tamper(func(db *pebble.DB) error { return db.Flush() }); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	f := &nthFault{match: match, n: n, err: errorfs.ErrInjected}
	f.armed.Store(true)
	a := &acked{epochs: map[uint64][]byte{}}
	s, err := Open(testDir, Options{FS: errorfs.Wrap(mem, f)})
	if err == nil {
		err = workload(s, a)
	} else if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("op %d: Open: %v does not wrap the injected fault", n, err)
	}
	f.armed.Store(false)
	if s == nil {
		return reopened(t, mem, a, n, old)
	}
	if !f.injected.Load() {
		if err != nil {
			t.Fatalf("no fault injected, yet: %v", err)
		}
		closeStore(t, s)
		return true
	}
	if err != nil {
		if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("op %d: error %v does not wrap the injected fault", n, err)
		}
		select {
		case <-s.Failed():
		default:
			t.Fatalf("op %d: the call failed (%v) but the store did not", n, err)
		}
	}
	// Otherwise Pebble absorbed the fault (a read retried from cache, a
	// preallocation); the store may or may not have failed.
	_ = s.Close()
	return reopened(t, mem, a, n, old)
}

// reopened checks that the store on mem, opened without faults, holds
// every acknowledged record. It opens a copy: after a fault that parked a
// Pebble goroutine, the old database still holds the lock on mem.
func reopened(t *testing.T, mem vfs.FS, a *acked, n int64, old *RoundRecord) bool {
	t.Helper()
	fresh := vfs.NewMem()
	if _, err := vfs.Clone(mem, fresh, testDir, testDir); err != nil {
		t.Fatal(err)
	}
	s := openMem(t, fresh)
	defer closeStore(t, s)
	for _, r := range append(a.rounds, old) {
		got, err := s.Round(r.Epoch, r.Round, r.Miner)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("op %d failed (%v): acknowledged round %d/%d after reopen: %v", n, err, r.Epoch, r.Round, err)
		}
	}
	for e, env := range a.epochs {
		if got, err := s.EpochRecord(e, []byte("v")); err != nil || string(got) != string(env) {
			t.Fatalf("op %d: acknowledged epoch record %d after reopen: %q, %v", n, e, got, err)
		}
	}
	return false
}

// TestFullDisk: with every write failing ENOSPC, a write returns an error
// saying so and the store stops; opening the store on the full disk
// returns an error, not a panic (Pebble's MANIFEST flush fails there).
func TestFullDisk(t *testing.T) {
	mem := vfs.NewMem()
	closeStore(t, fixtureMem(t, mem))
	var full atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	s := openMem(t, fs)
	full.Store(true)
	err := s.PutRound(recordtest.Round(5, 5, "m"))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("PutRound on a full disk: %v, want ENOSPC", err)
	}
	<-s.Failed()
	_ = s.Close()
	if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Open on a full disk: %v, want ENOSPC", err)
	}
	full.Store(false)
	s = openMem(t, mem)
	defer closeStore(t, s)
	if n := len(collect(t, s, 0, ^uint64(0))); n != 1 {
		t.Fatalf("%d records after the disk filled, want 1", n)
	}
}

func fixtureMem(t *testing.T, fs vfs.FS) *Store {
	s := openMem(t, fs)
	if err := s.PutRound(recordtest.Round(1, 1, "m")); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBackgroundFatal: a MANIFEST write failing in a background flush makes
// Pebble call Fatalf off any store call. The process must not end: the
// goroutine is parked, the store fails with the error, and Close returns
// rather than waiting for the parked goroutine.
func TestBackgroundFatal(t *testing.T) {
	mem := vfs.NewMem()
	var armed atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if armed.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && isManifest(op.Path) {
			return errorfs.ErrInjected
		}
		return nil
	}))
	s := fixtureMem(t, fs)
	armed.Store(true)
	go s.db.Flush() // waits for the flush forever: its goroutine is parked
	select {
	case <-s.Failed():
	case <-time.After(time.Minute):
		t.Fatal("the store did not fail")
	}
	if err := s.Err(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Err: %v, want the injected fault", err)
	}
	if err := s.PutRound(recordtest.Round(2, 2, "m")); err == nil {
		t.Fatal("PutRound after a fatal error succeeded")
	}
	if err := s.Close(); !errors.Is(err, ErrHeld) {
		t.Fatalf("Close after a parked fatal error: %v, want ErrHeld", err)
	}
}

func isManifest(path string) bool {
	base := vfs.Default.PathBase(path)
	return len(base) > 9 && base[:9] == "MANIFEST-"
}

// TestCorruptionEventFailsStore: corruption Pebble finds while the store
// runs (a compaction or read meeting a bad block) fails the store with
// ErrCorrupt naming the file, so a running node stops and is not restarted
// on it.
func TestCorruptionEventFailsStore(t *testing.T) {
	s := fixtureMem(t, vfs.NewMem())
	defer s.Close()
	eventListener(s.faults).DataCorruption(pebble.DataCorruptionInfo{Path: "db/000005.sst", Details: errors.New("checksum mismatch")})
	<-s.Failed()
	if err := s.Err(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "000005.sst") {
		t.Fatalf("Err: %v, want ErrCorrupt naming the file", err)
	}
	if err := s.PutRound(recordtest.Round(3, 3, "m")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("PutRound after corruption: %v, want refused with ErrCorrupt", err)
	}
}

// TestFullDiskReplay: on a disk with room left only for small appends (the
// WAL and MANIFEST, not a new table), Open's flush of the replayed WAL
// fails. Pebble retries that flush at once and for ever, and its Open
// waits for it: Open must return an error saying the disk is full instead,
// and the store keep its records.
func TestFullDiskReplay(t *testing.T) {
	mem := vfs.NewMem()
	closeStore(t, fixtureMem(t, mem)) // the record is in the WAL only
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && strings.HasSuffix(op.Path, ".sst") {
			return syscall.ENOSPC
		}
		return nil
	}))
	done := make(chan error, 1)
	go func() {
		s, err := Open(testDir, Options{FS: fs})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), testDir) {
			t.Fatalf("Open on a full disk: %v, want ENOSPC naming the store, and ErrHeld", err)
		}
		t.Log(err)
	case <-time.After(20 * time.Second): // a guard: Open returns in milliseconds
		t.Fatal("Open on a full disk never returned")
	}
	reopened(t, mem, &acked{}, 0, recordtest.Round(1, 1, "m"))
}

// readOnlyFS fails every operation that would change fs, as a read-only
// filesystem does.
func readOnlyFS(fs vfs.FS) vfs.FS {
	return errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && op.Kind != errorfs.OpFileClose {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.EROFS}
		}
		return nil
	}))
}

// TestReadOnlyFilesystem: a store on a read-only filesystem (an archived
// copy) opens read-only and reads everything, although Pebble cannot take
// its LOCK file there; a writable open fails, saying why.
func TestReadOnlyFilesystem(t *testing.T) {
	mem := vfs.NewMem()
	closeStore(t, fixtureMem(t, mem))
	ro := readOnlyFS(mem)
	s, err := Open(testDir, Options{FS: ro, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open on a read-only filesystem: %v", err)
	}
	if n := len(collect(t, s, 0, ^uint64(0))); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
	closeStore(t, s)
	if _, err := Open(testDir, Options{FS: ro}); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("writable Open on a read-only filesystem: %v, want EROFS", err)
	}
}
