package store

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// The fixture's size: a stopped validator's home of the kind the issue
// damaged (17 rounds, 4 epoch records).
const (
	fixtureRounds = 17
	fixtureEpochs = 4
)

// fixture writes a closed store in a temporary directory. flushed moves
// everything into an sstable (a flushed store); otherwise the records are
// in the WAL only, as after a short run.
func fixture(t *testing.T, flushed bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range fixtureRounds {
		if err := s.PutRound(recordtest.Round(uint64(i/5), uint64(i), "miner")); err != nil {
			t.Fatal(err)
		}
	}
	for e := range fixtureEpochs {
		if err := s.PutEpochRecord(uint64(e), []byte("validator"), []byte(fmt.Sprintf("signed epoch %d", e))); err != nil {
			t.Fatal(err)
		}
	}
	if flushed {
		if err := s.Tamper(func(db *pebble.DB) error { return db.Flush() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hashes maps each file under dir to its SHA-256 (and mode, for FIFOs).
func hashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed or removed %s", what, filepath.Base(p))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s created %s", what, filepath.Base(p))
		}
	}
}

// files lists dir's files whose names match the glob pattern.
func files(t *testing.T, dir, pattern string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func flipAt(t *testing.T, path string, frac float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := min(int(float64(len(b))*frac), len(b)-1)
	b[i] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// walUsed is the length of the WAL's written part: Pebble preallocates
// and the rest is zeros, where a flip is noise, not damage to a record.
func walUsed(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

// checkDamaged opens a damaged store read-only, then writable, and checks
// that each either refuses it with ErrCorrupt or holds every record; and
// that neither open changed a file.
func checkDamaged(t *testing.T, dir string) {
	t.Helper()
	before := hashes(t, dir)
	for _, ro := range []bool{true, false} {
		s, err := Open(dir, Options{ReadOnly: ro})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("Open(ReadOnly=%v): %v, want ErrCorrupt", ro, err)
			}
			t.Logf("Open(ReadOnly=%v): %v", ro, err)
			sameFiles(t, fmt.Sprintf("a refused Open(ReadOnly=%v)", ro), before, hashes(t, dir))
			continue
		}
		n, m := 0, 0
		var rerr error
		for _, err := range s.Rounds(0, ^uint64(0)) {
			if err != nil {
				rerr = err
				break
			}
			n++
		}
		for _, err := range s.EpochRecords(0, ^uint64(0)) {
			if err != nil {
				rerr = err
				break
			}
			m++
		}
		s.Close()
		switch {
		case rerr != nil && !errors.Is(rerr, ErrCorrupt):
			t.Errorf("reading a damaged store: %v, want ErrCorrupt", rerr)
		case rerr == nil && (n != fixtureRounds || m != fixtureEpochs):
			t.Errorf("Open(ReadOnly=%v) accepted a store with %d of %d rounds and %d of %d epoch records", ro, n, fixtureRounds, m, fixtureEpochs)
		}
		if ro {
			sameFiles(t, "a read-only Open", before, hashes(t, dir))
		}
	}
}

func TestWALFlips(t *testing.T) {
	for _, frac := range []float64{0.1, 0.5, 0.9} {
		t.Run(fmt.Sprintf("%.0f%%", 100*frac), func(t *testing.T) {
			dir := fixture(t, false)
			logs := files(t, dir, "*.log")
			if len(logs) == 0 {
				t.Fatal("no WAL")
			}
			wal := logs[len(logs)-1]
			used := walUsed(t, wal)
			b, _ := os.ReadFile(wal)
			b[int(float64(used)*frac)] ^= 0x40
			if err := os.WriteFile(wal, b, 0o644); err != nil {
				t.Fatal(err)
			}
			checkDamaged(t, dir)
		})
	}
}

func TestManifestDamage(t *testing.T) {
	damage := map[string]func(t *testing.T, dir string){
		"mid-file flip": func(t *testing.T, dir string) { flipAt(t, manifest(t, dir), 0.5) },
		"last byte":     func(t *testing.T, dir string) { flipAt(t, manifest(t, dir), 1) },
		"truncated": func(t *testing.T, dir string) {
			p := manifest(t, dir)
			st, _ := os.Stat(p)
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"deleted marker": func(t *testing.T, dir string) {
			for _, m := range files(t, dir, "marker.manifest.*") {
				if err := os.Remove(m); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, fn := range damage {
		for _, flushed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s flushed=%v", name, flushed), func(t *testing.T) {
				dir := fixture(t, flushed)
				fn(t, dir)
				checkDamaged(t, dir)
			})
		}
	}
}

func manifest(t *testing.T, dir string) string {
	m := files(t, dir, "MANIFEST-*")
	if len(m) == 0 {
		t.Fatal("no MANIFEST")
	}
	return m[len(m)-1]
}

// TestSSTFlips flips a byte at several points of the flushed table: each
// is refused, or leaves every record readable; none panics.
func TestSSTFlips(t *testing.T) {
	for _, frac := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
		t.Run(fmt.Sprintf("%.0f%%", 100*frac), func(t *testing.T) {
			dir := fixture(t, true)
			ssts := files(t, dir, "*.sst")
			if len(ssts) == 0 {
				t.Fatal("no sstable")
			}
			flipAt(t, ssts[0], frac)
			checkDamaged(t, dir)
		})
	}
}

// TestHeadDamage: a damaged or missing head is refused, not trusted or
// silently replaced.
func TestHeadDamage(t *testing.T) {
	t.Run("flip", func(t *testing.T) {
		dir := fixture(t, false)
		flipAt(t, filepath.Join(dir, HeadFile), 0.3)
		checkDamaged(t, dir)
	})
	t.Run("deleted", func(t *testing.T) {
		dir := fixture(t, false)
		if err := os.Remove(filepath.Join(dir, HeadFile)); err != nil {
			t.Fatal(err)
		}
		checkDamaged(t, dir)
	})
}

// TestReadOnly: a read-only open of a healthy store reads everything,
// writes nothing, and refuses writes.
func TestReadOnly(t *testing.T) {
	dir := fixture(t, false)
	before := hashes(t, dir)
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(collect(t, s, 0, ^uint64(0))); got != fixtureRounds {
		t.Fatalf("%d rounds, want %d", got, fixtureRounds)
	}
	if err := s.PutRound(recordtest.Round(9, 9, "x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("PutRound on a read-only store: %v, want ErrReadOnly", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "a read-only open", before, hashes(t, dir))
	if _, err := Open(filepath.Join(t.TempDir(), "none"), Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of a missing store succeeded")
	}
}

// TestHeadPruned: pruned round records are not loss, whether or not the
// newest record is among them; records lost after pruning still are.
func TestHeadPruned(t *testing.T) {
	for _, below := range []uint64{2, 99} { // the fixture's rounds are in epochs 0..3
		dir := fixture(t, false)
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PruneEvidence(below); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = Open(dir, Options{})
		if err != nil {
			t.Fatalf("Open after pruning below epoch %d: %v", below, err)
		}
		left := len(collect(t, s, 0, ^uint64(0)))
		s.Close()
		if below == 99 || left == 0 {
			continue
		}
		db, err := pebble.Open(dir, &pebble.Options{Logger: logger{newFaults()}})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(db.Delete(recordKey(2, 10, []byte("miner")), pebble.Sync), db.Close()); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a record lost after pruning: Open %v, want ErrCorrupt", err)
		}
	}
}

// TestLocked: a store in use is refused with ErrLocked, read-only too.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ro := range []bool{true, false} {
		if _, err := Open(dir, Options{ReadOnly: ro}); !errors.Is(err, ErrLocked) {
			t.Errorf("Open(ReadOnly=%v) of a store in use: %v, want ErrLocked", ro, err)
		}
	}
}

// TestHeadUpgrade: a store written before heads existed gets one at its
// first writable open, and from then on a lost record is detected.
func TestHeadUpgrade(t *testing.T) {
	fs := vfs.NewMem()
	rawSet(t, fs, schemaKey, binary.BigEndian.AppendUint64(nil, schemaVersion))
	r := recordtest.Round(1, 1, "m")
	rawSet(t, fs, recordKey(r.Epoch, r.Round, r.Miner), record.EncodeRound(r))
	s, err := Open(testDir, Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a store without a head: %v", err)
	}
	s.Close()
	closeStore(t, openMem(t, fs)) // writes the head
	db, err := pebble.Open(testDir, &pebble.Options{FS: fs, Logger: logger{newFaults()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(db.Delete(recordKey(r.Epoch, r.Round, r.Miner), pebble.Sync), db.Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open after a record of an upgraded store was lost: %v, want ErrCorrupt", err)
	}
}

// TestHeadPerValidator: each validator's epoch records are a chain of their
// own; losing one validator's record is loss even if another validator's
// appeared meanwhile and the total is unchanged.
func TestHeadPerValidator(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	for _, e := range []uint64{1, 2} {
		if err := s.PutEpochRecord(e, []byte("v1"), []byte("record")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutEpochRecord(1, []byte("v2"), []byte("record")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	db, err := pebble.Open(testDir, &pebble.Options{FS: fs, Logger: logger{newFaults()}})
	if err != nil {
		t.Fatal(err)
	}
	err = errors.Join(db.Delete(envelopeKey(epochTag, 1, []byte("v1")), pebble.Sync),
		db.Set(envelopeKey(epochTag, 2, []byte("v2")), envelopeValue([]byte("record")), pebble.Sync), db.Close())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(testDir, Options{FS: fs})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "validator "+fmt.Sprintf("%x", "v1")) {
		t.Fatalf("Open: %v, want ErrCorrupt naming v1's chain", err)
	}
}

// TestEpochChains: the head lists each validator's count and latest epoch
// without a scan, the same after a reopen, and a record stored again
// (gossip redelivers) counts once.
func TestEpochChains(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	for _, p := range []struct {
		e uint64
		v string
	}{{3, "v1"}, {1, "v1"}, {2, "v2"}, {3, "v1"}} {
		if err := s.PutEpochRecord(p.e, []byte(p.v), []byte("record")); err != nil {
			t.Fatal(err)
		}
	}
	want := []EpochChain{{Validator: []byte("v1"), Count: 2, Latest: 3}, {Validator: []byte("v2"), Count: 1, Latest: 2}}
	if got := s.EpochChains(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("EpochChains %v, want %v", got, want)
	}
	closeStore(t, s)
	s = openMem(t, fs)
	if got := s.EpochChains(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a reopen: EpochChains %v, want %v", got, want)
	}
}
