package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

const testDir = "db"

func openMem(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open(testDir, Options{FS: fs})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func closeStore(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func collect(t *testing.T, s *Store, from, to uint64) []*RoundRecord {
	t.Helper()
	var out []*RoundRecord
	for r, err := range s.Rounds(from, to) {
		if err != nil {
			t.Fatalf("Rounds(%d, %d): %v", from, to, err)
		}
		out = append(out, r)
	}
	return out
}

// roundsErr returns the error Rounds yields, if any.
func roundsErr(s *Store, from, to uint64) error {
	for _, err := range s.Rounds(from, to) {
		if err != nil {
			return err
		}
	}
	return nil
}

// sortedRecords is a set of records in key order: by epoch, round, then
// miner bytes, where a miner that is a prefix of another sorts first.
func sortedRecords() []*RoundRecord {
	return []*RoundRecord{
		recordtest.Round(0, 0, "a"),
		recordtest.Failed(0, 0, "ab"),
		recordtest.Round(0, 0, "b"),
		recordtest.Round(0, 1, "a"),
		recordtest.Round(0, 256, "a"), // big-endian: 256 after 1, unlike little-endian
		recordtest.Failed(1, 0, "a"),
		recordtest.Round(2, 5, "z"),
		recordtest.Round(256, 0, "a"),
		recordtest.Round(math.MaxUint64, math.MaxUint64, "a"),
	}
}

func TestPutGetList(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	want := sortedRecords()
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(want)) {
		if err := s.PutRound(want[i]); err != nil {
			t.Fatalf("PutRound(%d): %v", i, err)
		}
	}
	for _, r := range want {
		got, err := s.Round(r.Epoch, r.Round, r.Miner)
		if err != nil {
			t.Fatalf("Round: %v", err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("Round = %+v, want %+v", got, r)
		}
	}

	ranges := []struct {
		from, to uint64
		want     []*RoundRecord
	}{
		{0, math.MaxUint64, want},
		{0, 0, want[:5]},
		{1, 2, want[5:7]},
		{3, 255, nil},
		{256, math.MaxUint64 - 1, want[7:8]},
		{math.MaxUint64, math.MaxUint64, want[8:]},
		{2, 1, nil},
	}
	for _, c := range ranges {
		if got := collect(t, s, c.from, c.to); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Rounds(%d, %d): got %d records, want %d (or wrong order)", c.from, c.to, len(got), len(c.want))
		}
	}

	// Breaking out of the loop early releases the iterator (Close would
	// report a leaked one).
	for range s.Rounds(0, math.MaxUint64) {
		break
	}
}

func TestExistsAndNotFound(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	r := recordtest.Round(1, 2, "miner")
	if err := s.PutRound(r); err != nil {
		t.Fatal(err)
	}
	other := recordtest.Failed(1, 2, "miner")
	if err := s.PutRound(other); !errors.Is(err, ErrExists) {
		t.Fatalf("second PutRound: %v, want ErrExists", err)
	}
	if got, err := s.Round(1, 2, []byte("miner")); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("Round after refused overwrite = %+v, %v; want the first record", got, err)
	}
	for _, k := range []struct {
		epoch, round uint64
		miner        string
	}{{1, 2, "mine"}, {1, 2, "miner2"}, {1, 3, "miner"}, {0, 2, "miner"}} {
		if _, err := s.Round(k.epoch, k.round, []byte(k.miner)); !errors.Is(err, ErrNotFound) {
			t.Errorf("Round(%d, %d, %q): %v, want ErrNotFound", k.epoch, k.round, k.miner, err)
		}
	}
	for _, miner := range [][]byte{nil, make([]byte, MaxPeerIDLen+1)} {
		if _, err := s.Round(1, 2, miner); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Round with a %d-byte miner: %v, want a bound error", len(miner), err)
		}
	}
}

// TestConcurrentPut races writers of one key: exactly one wins.
func TestConcurrentPut(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	won := racePuts(t, 8, func(i int) error {
		r := recordtest.Failed(1, 2, "miner")
		r.Reason = fmt.Sprintf("writer %d", i)
		return s.PutRound(r)
	})
	if won != 1 {
		t.Fatalf("%d writers succeeded, want 1", won)
	}
}

// racePuts runs put(0..n-1) at once and returns how many succeeded; an
// error other than ErrExists fails the test.
func racePuts(t *testing.T, n int, put func(i int) error) int {
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- put(i) }()
	}
	won := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, ErrExists):
			t.Fatalf("put: %v", err)
		}
	}
	return won
}

// TestPutInvalid checks that PutRound applies validate (whose cases are in
// TestValidate) and writes nothing for a refused record.
func TestPutInvalid(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	for _, edit := range []func(r *RoundRecord){
		func(r *RoundRecord) { r.Validator = nil },
		func(r *RoundRecord) { r.Challenge = make([]byte, record.MaxEnvelopeLen+1) },
		func(r *RoundRecord) { r.Tiles = make([]TileVerdict, record.MaxSamples+1) },
		func(r *RoundRecord) { r.Verdict = 0 },
	} {
		r := recordtest.Round(1, 2, "miner")
		edit(r)
		if err := s.PutRound(r); err == nil || !strings.Contains(err.Error(), "invalid round record") {
			t.Fatalf("PutRound: %v, want a validation error", err)
		}
	}
	if got := collect(t, s, 0, math.MaxUint64); len(got) != 0 {
		t.Fatalf("%d records stored after refused writes", len(got))
	}
	// The largest valid record (about 4.3 MiB) fits.
	if err := s.PutRound(recordtest.Max()); err != nil {
		t.Fatalf("PutRound(max): %v", err)
	}
}

func TestReopen(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	want := sortedRecords()
	for _, r := range want {
		if err := s.PutRound(r); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if err := s.PutRound(recordtest.Round(9, 9, "x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutRound after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Round(0, 0, []byte("a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Round after Close: %v, want ErrClosed", err)
	}
	if err := roundsErr(s, 0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Rounds after Close: %v, want ErrClosed", err)
	}

	s = openMem(t, fs)
	defer closeStore(t, s)
	if got := collect(t, s, 0, math.MaxUint64); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: %d records, want %d (or they differ)", len(got), len(want))
	}
	if err := s.PutRound(want[0]); !errors.Is(err, ErrExists) {
		t.Fatalf("PutRound of a stored record after reopen: %v, want ErrExists", err)
	}
}

// rawSet writes key=val into the store in dir on fs, bypassing Store.
func rawSet(t *testing.T, fs vfs.FS, key, val []byte) {
	t.Helper()
	db, err := pebble.Open(testDir, &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatNewest, Logger: logger{newFaults()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set(key, val, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSchema(t *testing.T) {
	be := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	cases := []struct {
		name, want string
		val        []byte
	}{
		{"newer", "schema version 2 is newer", be(2)},
		{"zero", "corrupt data", be(0)},
		{"short", "corrupt data", []byte{1}},
		{"long", "corrupt data", append(be(1), 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			closeStore(t, openMem(t, fs))
			rawSet(t, fs, schemaKey, c.val)
			if _, err := Open(testDir, Options{FS: fs}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open: %v, want an error containing %q", err, c.want)
			}
		})
	}
	r := recordtest.Round(1, 1, "m")
	for name, key := range map[string][]byte{
		"records":        recordKey(r.Epoch, r.Round, r.Miner),
		"epoch records":  envelopeKey(epochTag, 1, []byte("v")),
		"announces":      envelopeKey(announceTag, 1, []byte("m")),
		"an unknown key": []byte("z"),
	} {
		t.Run(name+" without schema", func(t *testing.T) {
			fs := vfs.NewMem()
			rawSet(t, fs, key, record.EncodeRound(r))
			if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestCorruption(t *testing.T) {
	r := recordtest.Round(1, 2, "miner")
	key := recordKey(r.Epoch, r.Round, r.Miner)
	good := record.EncodeRound(r)
	cases := map[string][]byte{
		"empty":           {},
		"format 0":        append([]byte{0}, good[1:]...),
		"format 2":        append([]byte{2}, good[1:]...),
		"garbage":         bytes.Repeat([]byte{0xa5}, 200),
		"half":            good[:len(good)/2],
		"last byte gone":  good[:len(good)-1],
		"trailing byte":   append(bytes.Clone(good), 0),
		"other epoch":     record.EncodeRound(recordtest.Round(2, 2, "miner")),
		"other round":     record.EncodeRound(recordtest.Round(1, 3, "miner")),
		"other miner":     record.EncodeRound(recordtest.Round(1, 2, "miner2")),
		"invalid verdict": record.EncodeRound(&RoundRecord{Epoch: 1, Round: 2, Miner: r.Miner, Validator: []byte{1}, Challenge: []byte{1}, Verdict: 3}),
	}
	for name, val := range cases {
		t.Run(name, func(t *testing.T) {
			s := openMem(t, vfs.NewMem())
			defer closeStore(t, s)
			if err := s.db.Set(key, val, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Round(r.Epoch, r.Round, r.Miner); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Round: %v, want ErrCorrupt", err)
			}
			if err := roundsErr(s, 0, 10); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Rounds: %v, want ErrCorrupt", err)
			}
		})
	}

	// Any single bit flip either fails to decode or, the encoding being
	// canonical, decodes to a different record; never a panic.
	t.Run("bit flips", func(t *testing.T) {
		s := openMem(t, vfs.NewMem())
		defer closeStore(t, s)
		for bit := range 8 * len(good) {
			val := bytes.Clone(good)
			val[bit/8] ^= 1 << (bit % 8)
			if err := s.db.Set(key, val, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
			got, err := s.Round(r.Epoch, r.Round, r.Miner)
			if err == nil && reflect.DeepEqual(got, r) {
				t.Fatalf("flipping bit %d left the record unchanged", bit)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flipping bit %d: %v, want ErrCorrupt", bit, err)
			}
		}
	})

	t.Run("bad key", func(t *testing.T) {
		s := openMem(t, vfs.NewMem())
		defer closeStore(t, s)
		for _, k := range [][]byte{recordKey(1, 2, nil), recordKey(1, 2, make([]byte, MaxPeerIDLen+1))} {
			if err := s.db.Set(k, good, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := roundsErr(s, 0, 10); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Rounds with a %d-byte key: %v, want ErrCorrupt", len(k), err)
			}
			if err := s.db.Delete(k, pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// walFault injects errorfs.ErrInjected into operations of the given kinds on
// WAL files while on is set, counting injections.
type walFault struct {
	kinds    []errorfs.OpKind
	on       atomic.Bool
	injected atomic.Int64
}

func (f *walFault) String() string { return "walFault" }

func (f *walFault) MaybeError(op errorfs.Op) error {
	if !f.on.Load() || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	for _, k := range f.kinds {
		if op.Kind == k {
			f.injected.Add(1)
			return errorfs.ErrInjected
		}
	}
	return nil
}

// TestWriteFault fails the WAL write or sync under PutRound, then reopens
// the store on the same files without injection: the record must be absent
// or complete, never half-written.
func TestWriteFault(t *testing.T) {
	cases := map[string][]errorfs.OpKind{
		"write": {errorfs.OpFileWrite, errorfs.OpFileWriteAt},
		"sync":  {errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo},
	}
	for name, kinds := range cases {
		t.Run(name, func(t *testing.T) {
			mem := vfs.NewMem()
			fault := &walFault{kinds: kinds}
			s := openMem(t, errorfs.Wrap(mem, fault))
			before := recordtest.Round(1, 1, "miner")
			if err := s.PutRound(before); err != nil {
				t.Fatal(err)
			}

			// A record small enough not to rotate the memtable: Pebble
			// panics if closing the old WAL fails during a rotation.
			r := recordtest.Round(1, 2, "miner")
			fault.on.Store(true)
			if err := s.PutRound(r); err == nil {
				t.Fatal("PutRound succeeded despite the injected fault")
			}
			if fault.injected.Load() == 0 {
				t.Fatal("no fault was injected")
			}
			// Sticky: the store refuses writes until reopened, even with
			// the fault gone.
			fault.on.Store(false)
			if err := s.PutRound(recordtest.Round(2, 2, "miner")); err == nil {
				t.Fatal("PutRound after a failed write succeeded")
			}
			_ = s.Close() // may report the WAL failure again

			s = openMem(t, mem)
			defer closeStore(t, s)
			got, err := s.Round(r.Epoch, r.Round, r.Miner)
			switch {
			case errors.Is(err, ErrNotFound):
				t.Logf("record absent after the %s fault", name)
			case err != nil:
				t.Fatalf("Round after reopen: %v", err)
			case !reflect.DeepEqual(got, r):
				t.Fatal("record after reopen differs from the one written")
			default:
				t.Logf("record complete after the %s fault", name)
			}
			if got, err := s.Round(before.Epoch, before.Round, before.Miner); err != nil || !reflect.DeepEqual(got, before) {
				t.Fatalf("earlier record after reopen: %+v, %v", got, err)
			}
			if err := s.PutRound(recordtest.Round(2, 2, "miner")); err != nil {
				t.Fatalf("PutRound after reopen: %v", err)
			}
		})
	}
}

// TestOpenFault fails each write operation of Open in turn, on a fresh
// filesystem each time: Open must return an error, not panic or exit, and the
// files it leaves must open cleanly afterwards.
func TestOpenFault(t *testing.T) {
	for i := int64(0); ; i++ {
		mem := vfs.NewMem()
		var n, injected atomic.Int64
		var opened atomic.Bool // no faults in Close, which writes too
		inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
			if !opened.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && n.Add(1)-1 == i {
				injected.Add(1)
				return errorfs.ErrInjected
			}
			return nil
		})
		s, err := Open(testDir, Options{FS: errorfs.Wrap(mem, inj)})
		opened.Store(true)
		switch {
		case err == nil && injected.Load() == 0:
			closeStore(t, s)
			t.Logf("Open performs %d write operations", i)
			return
		case err == nil:
			// The fault hit an operation Pebble tolerates, or one in the
			// background that Close reports.
			if err := s.Close(); err != nil && !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("write %d failed: Close: %v", i, err)
			}
		case !errors.Is(err, errorfs.ErrInjected):
			t.Fatalf("write %d failed: Open error %v does not wrap the injected one", i, err)
		}
		s, err = Open(testDir, Options{FS: mem})
		if err != nil {
			t.Fatalf("after write %d failed, a clean Open: %v", i, err)
		}
		closeStore(t, s)
	}
}
