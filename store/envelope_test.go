package store

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// envelopeKind abstracts over epoch records and announces, whose storage
// differs only in bounds, tag, overwrite rule and durability.
type envelopeKind struct {
	name string
	tag  byte
	max  int
	put  func(s *Store, epoch uint64, id, env []byte) error
	get  func(s *Store, epoch uint64, id []byte) ([]byte, error)
	// list returns the entries of epochs from..to as EpochEntry (an
	// announce's miner in Validator).
	list func(s *Store, from, to uint64) ([]EpochEntry, error)
}

var envelopeKinds = []envelopeKind{
	{
		name: "epoch record", tag: epochTag, max: MaxEpochRecordLen,
		put: func(s *Store, epoch uint64, id, env []byte) error { return s.PutEpochRecord(epoch, id, env) },
		get: (*Store).EpochRecord,
		list: func(s *Store, from, to uint64) ([]EpochEntry, error) {
			var out []EpochEntry
			for e, err := range s.EpochRecords(from, to) {
				if err != nil {
					return out, err
				}
				out = append(out, e)
			}
			return out, nil
		},
	},
	{
		name: "announce", tag: announceTag, max: MaxAnnounceLen,
		put: func(s *Store, epoch uint64, id, env []byte) error {
			_, err := s.PutAnnounce(epoch, id, env)
			return err
		},
		get: (*Store).Announce,
		// Announces lists one epoch at a time.
		list: func(s *Store, from, to uint64) ([]EpochEntry, error) {
			var out []EpochEntry
			for epoch := from; epoch <= to; epoch++ {
				for e, err := range s.Announces(epoch) {
					if err != nil {
						return out, err
					}
					out = append(out, EpochEntry{Epoch: e.Epoch, Validator: e.Miner, Envelope: e.Envelope})
				}
				if epoch == to {
					break
				}
			}
			return out, nil
		},
	},
}

func testEnvelope(epoch uint64, id string) []byte {
	return fmt.Appendf(nil, "signed envelope for epoch %d from %s", epoch, id)
}

// sortedEntries is a set of entries in key order: by epoch, then peer ID
// bytes, where an ID that is a prefix of another sorts first.
func sortedEntries() []EpochEntry {
	var out []EpochEntry
	for _, k := range []struct {
		epoch uint64
		id    string
	}{
		{0, "a"}, {0, "ab"}, {0, "abc"}, {0, "b"},
		{1, "a"},
		{255, "z"},
		{256, "a"}, // big-endian: 256 after 255, unlike little-endian
		{256, strings.Repeat("\xff", MaxPeerIDLen)},
		{math.MaxUint64, "\x00"},
		{math.MaxUint64, "a"},
	} {
		out = append(out, EpochEntry{Epoch: k.epoch, Validator: []byte(k.id), Envelope: testEnvelope(k.epoch, k.id)})
	}
	return out
}

func TestEnvelopePutGetList(t *testing.T) {
	for _, kind := range envelopeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := openMem(t, vfs.NewMem())
			defer closeStore(t, s)
			want := sortedEntries()
			for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(len(want)) {
				if err := kind.put(s, want[i].Epoch, want[i].Validator, want[i].Envelope); err != nil {
					t.Fatalf("put(%d): %v", i, err)
				}
			}
			for _, e := range want {
				got, err := kind.get(s, e.Epoch, e.Validator)
				if err != nil || !bytes.Equal(got, e.Envelope) {
					t.Fatalf("get(%d, %q) = %q, %v; want %q", e.Epoch, e.Validator, got, err, e.Envelope)
				}
			}
			ranges := []struct {
				from, to uint64
				want     []EpochEntry
			}{
				{0, 0, want[:4]},
				{1, 1, want[4:5]},
				{2, 254, nil},
				{255, 256, want[5:8]},
				{math.MaxUint64, math.MaxUint64, want[8:]},
			}
			if kind.tag == epochTag {
				ranges = append(ranges, []struct {
					from, to uint64
					want     []EpochEntry
				}{
					{0, math.MaxUint64, want},
					{0, math.MaxUint64 - 1, want[:8]},
					{2, 1, nil},
				}...)
			}
			for _, c := range ranges {
				got, err := kind.list(s, c.from, c.to)
				if err != nil {
					t.Fatalf("list(%d, %d): %v", c.from, c.to, err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("list(%d, %d): got %d entries, want %d (or wrong order)", c.from, c.to, len(got), len(c.want))
				}
			}
			for _, k := range []struct {
				epoch uint64
				id    string
			}{{0, "c"}, {0, "abcd"}, {2, "a"}, {math.MaxUint64 - 1, "a"}} {
				if _, err := kind.get(s, k.epoch, []byte(k.id)); !errors.Is(err, ErrNotFound) {
					t.Errorf("get(%d, %q): %v, want ErrNotFound", k.epoch, k.id, err)
				}
			}
			// The readers return copies: the iterator's buffers are reused.
			got, _ := kind.list(s, 0, 0)
			got[0].Envelope[0] ^= 1
			got[0].Validator[0] ^= 1
			if again, _ := kind.list(s, 0, 0); !reflect.DeepEqual(again, want[:4]) {
				t.Fatal("editing a listed entry changed the store")
			}
			// Breaking out of the loop early releases the iterator (Close
			// would report a leaked one).
			for range s.EpochRecords(0, math.MaxUint64) {
				break
			}
			for range s.Announces(0) {
				break
			}
		})
	}
}

func TestEnvelopeBounds(t *testing.T) {
	for _, kind := range envelopeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := openMem(t, vfs.NewMem())
			defer closeStore(t, s)
			id, env := []byte("peer"), []byte("env")
			cases := []struct {
				name, want string
				id, env    []byte
			}{
				{"no id", "0 bytes, want 1..64", nil, env},
				{"long id", "65 bytes, want 1..64", make([]byte, MaxPeerIDLen+1), env},
				{"no envelope", "envelope: 0 bytes", id, nil},
				{"long envelope", fmt.Sprintf("envelope: %d bytes, want 1..%d", kind.max+1, kind.max), id, make([]byte, kind.max+1)},
			}
			for _, c := range cases {
				if err := kind.put(s, 1, c.id, c.env); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: put: %v, want an error containing %q", c.name, err, c.want)
				}
			}
			for _, id := range [][]byte{nil, make([]byte, MaxPeerIDLen+1)} {
				if _, err := kind.get(s, 1, id); err == nil || errors.Is(err, ErrNotFound) {
					t.Errorf("get with a %d-byte ID: %v, want a bound error", len(id), err)
				}
			}
			if got, err := kind.list(s, 0, 2); err != nil || len(got) != 0 {
				t.Fatalf("%d entries (%v) stored after refused writes", len(got), err)
			}
			// The bounds themselves fit.
			for _, e := range []EpochEntry{
				{Epoch: 1, Validator: []byte{0}, Envelope: []byte{0}},
				{Epoch: 2, Validator: bytes.Repeat([]byte{0xff}, MaxPeerIDLen), Envelope: bytes.Repeat([]byte{0xee}, kind.max)},
			} {
				if err := kind.put(s, e.Epoch, e.Validator, e.Envelope); err != nil {
					t.Fatalf("put at a bound: %v", err)
				}
				if got, err := kind.get(s, e.Epoch, e.Validator); err != nil || !bytes.Equal(got, e.Envelope) {
					t.Fatalf("get at a bound: %d bytes, %v", len(got), err)
				}
			}
		})
	}
}

// TestEpochRecordExists checks append-only writes: identical bytes again are
// accepted (gossip redelivers), different bytes are refused.
func TestEpochRecordExists(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	v, env := []byte("validator"), []byte("first envelope")
	if err := s.PutEpochRecord(7, v, env); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  []byte
		want error
	}{
		{"identical", bytes.Clone(env), nil},
		{"different", []byte("second envelope"), ErrExists},
		{"prefix", env[:len(env)-1], ErrExists},
		{"extension", append(bytes.Clone(env), 0), ErrExists},
	}
	for _, c := range cases {
		if err := s.PutEpochRecord(7, v, c.env); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: PutEpochRecord: %v, want %v", c.name, err, c.want)
		}
	}
	if got, err := s.EpochRecord(7, v); err != nil || !bytes.Equal(got, env) {
		t.Fatalf("EpochRecord after refused overwrites = %q, %v; want the first", got, err)
	}
	// Another epoch or validator is another key.
	if err := s.PutEpochRecord(8, v, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEpochRecord(7, []byte("validator2"), []byte("other")); err != nil {
		t.Fatal(err)
	}
}

// TestEpochRecordConcurrentPut races writers of one key: of different
// bytes, exactly one wins; of the same bytes, all succeed.
func TestEpochRecordConcurrentPut(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	const writers = 8
	won := racePuts(t, writers, func(i int) error {
		return s.PutEpochRecord(1, []byte("v"), fmt.Appendf(nil, "writer %d", i))
	})
	if won != 1 {
		t.Fatalf("%d writers of different bytes succeeded, want 1", won)
	}
	if won := racePuts(t, writers, func(int) error { return s.PutEpochRecord(2, []byte("v"), []byte("same")) }); won != writers {
		t.Fatalf("%d of %d writers of identical bytes succeeded, want all", won, writers)
	}
}

func TestAnnounceFirstWins(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	m := []byte("miner")
	for i, c := range []struct {
		epoch  uint64
		env    string
		stored bool
	}{
		{5, "first", true},
		{5, "second", false},
		{5, "first", false},
		{6, "second", true},
		{4, "third", true},
	} {
		stored, err := s.PutAnnounce(c.epoch, m, []byte(c.env))
		if err != nil || stored != c.stored {
			t.Fatalf("PutAnnounce %d (epoch %d, %q) = %v, %v; want %v, nil", i, c.epoch, c.env, stored, err, c.stored)
		}
	}
	for epoch, want := range map[uint64]string{4: "third", 5: "first", 6: "second"} {
		if got, err := s.Announce(epoch, m); err != nil || string(got) != want {
			t.Errorf("Announce(%d) = %q, %v; want %q", epoch, got, err, want)
		}
	}
	// Concurrent announces of one key: exactly one is stored.
	const writers = 8
	type result struct {
		stored bool
		err    error
	}
	res := make(chan result, writers)
	for i := range writers {
		go func() {
			stored, err := s.PutAnnounce(9, m, fmt.Appendf(nil, "writer %d", i))
			res <- result{stored, err}
		}()
	}
	won := 0
	for range writers {
		r := <-res
		if r.err != nil {
			t.Fatalf("PutAnnounce: %v", r.err)
		}
		if r.stored {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent announces stored, want 1", won)
	}
}

func TestEnvelopeReopen(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	want := sortedEntries()
	for _, kind := range envelopeKinds {
		for _, e := range want {
			if err := kind.put(s, e.Epoch, e.Validator, e.Envelope); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.PutRound(recordtest.Round(0, 0, "a")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	if err := s.PutEpochRecord(1, []byte("v"), []byte("e")); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutEpochRecord after Close: %v, want ErrClosed", err)
	}
	if _, err := s.PutAnnounce(1, []byte("m"), []byte("e")); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutAnnounce after Close: %v, want ErrClosed", err)
	}
	for _, kind := range envelopeKinds {
		if _, err := kind.get(s, 0, []byte("a")); !errors.Is(err, ErrClosed) {
			t.Fatalf("%s get after Close: %v, want ErrClosed", kind.name, err)
		}
		if _, err := kind.list(s, 0, 0); !errors.Is(err, ErrClosed) {
			t.Fatalf("%s list after Close: %v, want ErrClosed", kind.name, err)
		}
	}

	s = openMem(t, fs)
	defer closeStore(t, s)
	for _, kind := range envelopeKinds {
		for _, r := range []struct{ from, to uint64 }{{0, 1}, {255, 256}, {math.MaxUint64, math.MaxUint64}} {
			got, err := kind.list(s, r.from, r.to)
			if err != nil {
				t.Fatalf("%s after reopen: %v", kind.name, err)
			}
			var w []EpochEntry
			for _, e := range want {
				if e.Epoch >= r.from && e.Epoch <= r.to {
					w = append(w, e)
				}
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("%s after reopen, epochs %d..%d: %d entries, want %d (or they differ)", kind.name, r.from, r.to, len(got), len(w))
			}
		}
	}
	if err := s.PutEpochRecord(want[0].Epoch, want[0].Validator, []byte("other")); !errors.Is(err, ErrExists) {
		t.Fatalf("PutEpochRecord over a stored record after reopen: %v, want ErrExists", err)
	}
	if err := s.PutEpochRecord(want[0].Epoch, want[0].Validator, want[0].Envelope); err != nil {
		t.Fatalf("PutEpochRecord of identical bytes after reopen: %v", err)
	}
	if stored, err := s.PutAnnounce(want[0].Epoch, want[0].Validator, []byte("other")); stored || err != nil {
		t.Fatalf("PutAnnounce over a stored announce after reopen: %v, %v; want false, nil", stored, err)
	}
	// The kinds do not see each other's keys, nor the round record's.
	if got := collect(t, s, 0, math.MaxUint64); len(got) != 1 {
		t.Fatalf("%d round records, want 1", len(got))
	}
}

// TestAnnounceCrash checks what PutAnnounce's documentation promises of an
// unsynced announce: a crash may lose it, unless a synced write followed.
func TestAnnounceCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openMem(t, fs)
	defer closeStore(t, s)
	crashed := func() *Store {
		t.Helper()
		return openMem(t, fs.CrashClone(vfs.CrashCloneCfg{})) // exactly what was synced
	}

	if _, err := s.PutAnnounce(1, []byte("m1"), []byte("hint")); err != nil {
		t.Fatal(err)
	}
	c := crashed()
	if _, err := c.Announce(1, []byte("m1")); errors.Is(err, ErrNotFound) {
		t.Log("unsynced announce lost in the crash")
	} else if err != nil {
		t.Fatal(err)
	}
	closeStore(t, c)

	if _, err := s.PutAnnounce(1, []byte("m2"), []byte("scored")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRound(recordtest.Round(1, 1, "m2")); err != nil {
		t.Fatal(err)
	}
	c = crashed()
	defer closeStore(t, c)
	for _, m := range []string{"m1", "m2"} {
		if _, err := c.Announce(1, []byte(m)); err != nil {
			t.Fatalf("announce of %s after a later synced write and a crash: %v", m, err)
		}
	}
}

// TestEnvelopeCorruption writes bad values and keys directly and expects
// ErrCorrupt from every reader, and from a writer that meets them.
func TestEnvelopeCorruption(t *testing.T) {
	for _, kind := range envelopeKinds {
		t.Run(kind.name, func(t *testing.T) {
			id := []byte("peer")
			key := envelopeKey(kind.tag, 3, id)
			cases := map[string][]byte{
				"empty":       {},
				"format only": {envelopeFormatV1},
				"format 0":    {0, 'x'},
				"format 2":    {2, 'x'},
				"too long":    append([]byte{envelopeFormatV1}, make([]byte, kind.max+1)...),
			}
			if kind.tag == announceTag {
				// An epoch record's bound is not an announce's.
				cases["epoch record size"] = envelopeValue(make([]byte, MaxEpochRecordLen))
			}
			for name, val := range cases {
				s := openMem(t, vfs.NewMem())
				if err := s.db.Set(key, val, pebble.Sync); err != nil {
					t.Fatal(err)
				}
				if _, err := kind.get(s, 3, id); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: get: %v, want ErrCorrupt", name, err)
				}
				if _, err := kind.list(s, 3, 3); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: list: %v, want ErrCorrupt", name, err)
				}
				if err := kind.put(s, 3, id, []byte("x")); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: put over it: %v, want ErrCorrupt", name, err)
				}
				closeStore(t, s)
			}

			s := openMem(t, vfs.NewMem())
			defer closeStore(t, s)
			good := envelopeValue([]byte("x"))
			for _, k := range [][]byte{envelopeKey(kind.tag, 3, nil), envelopeKey(kind.tag, 3, make([]byte, MaxPeerIDLen+1)), {kind.tag, 0, 0, 0, 0, 0, 0, 0, 3}} {
				if err := s.db.Set(k, good, pebble.Sync); err != nil {
					t.Fatal(err)
				}
				if _, err := kind.list(s, 3, 3); !errors.Is(err, ErrCorrupt) {
					t.Errorf("list with a %d-byte key: %v, want ErrCorrupt", len(k), err)
				}
				if err := s.db.Delete(k, pebble.Sync); err != nil {
					t.Fatal(err)
				}
			}
			// A key too short to hold an epoch lies before every epoch's
			// range and is never read.
			if err := s.db.Set([]byte{kind.tag, 0}, good, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if got, err := kind.list(s, 0, 3); err != nil || len(got) != 0 {
				t.Errorf("list with a 2-byte key: %d entries, %v", len(got), err)
			}
		})
	}
}

// TestEpochRecordWriteFault fails the WAL write or sync under
// PutEpochRecord, then reopens the store on the same files without
// injection: the record must be absent or complete, never half-written.
func TestEpochRecordWriteFault(t *testing.T) {
	cases := map[string][]errorfs.OpKind{
		"write": {errorfs.OpFileWrite, errorfs.OpFileWriteAt},
		"sync":  {errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo},
	}
	for name, kinds := range cases {
		t.Run(name, func(t *testing.T) {
			mem := vfs.NewMem()
			fault := &walFault{kinds: kinds}
			s := openMem(t, errorfs.Wrap(mem, fault))
			v := []byte("validator")
			before := []byte("epoch 1 record")
			if err := s.PutEpochRecord(1, v, before); err != nil {
				t.Fatal(err)
			}

			// An envelope small enough not to rotate the memtable.
			env := bytes.Repeat([]byte("epoch 2 record "), 1000)
			fault.on.Store(true)
			if err := s.PutEpochRecord(2, v, env); err == nil {
				t.Fatal("PutEpochRecord succeeded despite the injected fault")
			}
			if fault.injected.Load() == 0 {
				t.Fatal("no fault was injected")
			}
			// Sticky, for every kind of write.
			fault.on.Store(false)
			if err := s.PutEpochRecord(3, v, before); err == nil {
				t.Fatal("PutEpochRecord after a failed write succeeded")
			}
			if _, err := s.PutAnnounce(3, v, before); err == nil {
				t.Fatal("PutAnnounce after a failed write succeeded")
			}
			_ = s.Close() // may report the WAL failure again

			s = openMem(t, mem)
			defer closeStore(t, s)
			got, err := s.EpochRecord(2, v)
			switch {
			case errors.Is(err, ErrNotFound):
				t.Logf("record absent after the %s fault", name)
			case err != nil:
				t.Fatalf("EpochRecord after reopen: %v", err)
			case !bytes.Equal(got, env):
				t.Fatal("record after reopen differs from the one written")
			default:
				t.Logf("record complete after the %s fault", name)
			}
			if got, err := s.EpochRecord(1, v); err != nil || !bytes.Equal(got, before) {
				t.Fatalf("earlier record after reopen: %q, %v", got, err)
			}
			if err := s.PutEpochRecord(3, v, before); err != nil {
				t.Fatalf("PutEpochRecord after reopen: %v", err)
			}
		})
	}
}

// TestAnnounceWriteFault fails the WAL write under an unsynced PutAnnounce.
// The failure surfaces at the next synced write, which makes the store
// refuse writes; after a reopen the announce is absent or complete.
func TestAnnounceWriteFault(t *testing.T) {
	mem := vfs.NewMem()
	fault := &walFault{kinds: []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileWriteAt}}
	s := openMem(t, errorfs.Wrap(mem, fault))
	m, env := []byte("miner"), []byte("announce")
	fault.on.Store(true)
	if _, err := s.PutAnnounce(1, m, env); err != nil {
		t.Logf("PutAnnounce reported the fault itself: %v", err)
	}
	if err := s.PutEpochRecord(1, []byte("v"), []byte("e")); err == nil {
		t.Fatal("a synced write after a failed announce write succeeded")
	}
	if fault.injected.Load() == 0 {
		t.Fatal("no fault was injected")
	}
	fault.on.Store(false)
	if _, err := s.PutAnnounce(2, m, env); err == nil {
		t.Fatal("PutAnnounce after a failed write succeeded")
	}
	_ = s.Close()

	s = openMem(t, mem)
	defer closeStore(t, s)
	switch got, err := s.Announce(1, m); {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		t.Fatalf("Announce after reopen: %v", err)
	case !bytes.Equal(got, env):
		t.Fatal("announce after reopen differs from the one written")
	}
	if stored, err := s.PutAnnounce(2, m, env); !stored || err != nil {
		t.Fatalf("PutAnnounce after reopen: %v, %v", stored, err)
	}
}

func TestTamper(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	r := recordtest.Round(1, 2, "miner")
	if err := s.PutRound(r); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEpochRecord(1, []byte("v"), []byte("signed")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutAnnounce(1, []byte("m"), []byte("signed")); err != nil {
		t.Fatal(err)
	}

	// Forge a round record: delete it, then put the forgery.
	forged := recordtest.Round(1, 2, "miner")
	forged.TFLOPS *= 2
	if err := s.Tamper(func(db *pebble.DB) error { return db.Delete(RoundKey(1, 2, []byte("miner")), pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRound(forged); err != nil {
		t.Fatal(err)
	}
	// Flip an envelope byte in place, and drop an announce.
	if err := s.Tamper(func(db *pebble.DB) error {
		return errors.Join(
			db.Set(EpochRecordKey(1, []byte("v")), envelopeValue([]byte("signeD")), pebble.Sync),
			db.Delete(AnnounceKey(1, []byte("m")), pebble.Sync))
	}); err != nil {
		t.Fatal(err)
	}
	errFn := errors.New("fn failed")
	if err := s.Tamper(func(*pebble.DB) error { return errFn }); err != errFn {
		t.Fatalf("Tamper: %v, want fn's error", err)
	}
	closeStore(t, s)
	if err := s.Tamper(func(*pebble.DB) error { t.Fatal("fn ran on a closed store"); return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Tamper after Close: %v, want ErrClosed", err)
	}

	s = openMem(t, fs)
	defer closeStore(t, s)
	if got, err := s.Round(1, 2, []byte("miner")); err != nil || !reflect.DeepEqual(got, forged) {
		t.Fatalf("Round after tampering = %+v, %v; want the forgery", got, err)
	}
	if got, err := s.EpochRecord(1, []byte("v")); err != nil || string(got) != "signeD" {
		t.Fatalf("EpochRecord after tampering = %q, %v", got, err)
	}
	if _, err := s.Announce(1, []byte("m")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Announce after tampering: %v, want ErrNotFound", err)
	}
}

func TestEnvelopeValue(t *testing.T) {
	for _, max := range []int{MaxAnnounceLen, MaxEpochRecordLen} {
		for _, env := range [][]byte{{0}, []byte("envelope"), make([]byte, max)} {
			v := envelopeValue(env)
			got, err := decodeEnvelopeValue(v, max)
			if err != nil || !bytes.Equal(got, env) {
				t.Fatalf("decode(encode(%d bytes)) = %d bytes, %v", len(env), len(got), err)
			}
			if &got[0] == &v[1] {
				t.Fatal("decoded envelope aliases the value")
			}
		}
	}
	cases := []struct {
		name, want string
		v          []byte
		max        int
	}{
		{"empty", "empty value", nil, 8},
		{"format 0", "unknown format version 0", []byte{0, 1}, 8},
		{"format 2", "unknown format version 2", []byte{2, 1}, 8},
		{"no envelope", "envelope: 0 bytes, want 1..8", []byte{envelopeFormatV1}, 8},
		{"too long", "envelope: 9 bytes, want 1..8", append([]byte{envelopeFormatV1}, make([]byte, 9)...), 8},
	}
	for _, c := range cases {
		if _, err := decodeEnvelopeValue(c.v, c.max); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: decode %x: %v, want an error containing %q", c.name, c.v, err, c.want)
		}
	}
}

func FuzzDecodeEnvelopeValue(f *testing.F) {
	f.Add(envelopeValue([]byte("signed envelope")))
	f.Add([]byte{envelopeFormatV1})
	f.Add([]byte{2, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		for _, max := range []int{MaxAnnounceLen, MaxEpochRecordLen} {
			env, err := decodeEnvelopeValue(v, max)
			if err != nil {
				if checkEnvelopeValue(v, max) == nil {
					t.Fatalf("decode failed (%v) where check passed", err)
				}
				continue
			}
			if len(env) < 1 || len(env) > max {
				t.Fatalf("decoded a %d-byte envelope, bound %d", len(env), max)
			}
			// One encoding per envelope: re-encoding gives back the input.
			if re := envelopeValue(env); !bytes.Equal(re, v) {
				t.Fatalf("re-encoding %x gives %x", v, re)
			}
		}
	})
}
