package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestFinalSet(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	if _, ok, err := s.LastFinal(); ok || err != nil {
		t.Fatalf("LastFinal on an empty store: %v %v", ok, err)
	}
	f := FinalSet{
		Included: []FinalRecord{{Validator: []byte("a"), ID: [32]byte{1}}, {Validator: []byte("ab"), ID: [32]byte{2}}},
		Excluded: [][]byte{[]byte("q")},
	}
	for _, e := range []uint64{5, 3, 300} {
		if err := s.PutFinal(e, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutFinal(5, f); err != nil {
		t.Fatalf("same set again: %v", err)
	}
	if err := s.PutFinal(5, FinalSet{}); !errors.Is(err, ErrExists) {
		t.Fatalf("another set: %v", err)
	}
	got, err := s.Final(5)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("Final = %+v, %v", got, err)
	}
	if _, err := s.Final(4); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Final(4): %v", err)
	}
	if e, ok, err := s.LastFinal(); e != 300 || !ok || err != nil {
		t.Fatalf("LastFinal = %d %v %v", e, ok, err)
	}
	if !got.Counts([]byte("ab"), [32]byte{2}) || got.Counts([]byte("ab"), [32]byte{1}) || got.Counts([]byte("b"), [32]byte{2}) {
		t.Error("Counts")
	}
	if !got.IsExcluded([]byte("q")) || got.IsExcluded([]byte("a")) {
		t.Error("IsExcluded")
	}
	// An empty final set is a set: the epoch had no records in time.
	if err := s.PutFinal(9, FinalSet{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Final(9); err != nil || len(got.Included)+len(got.Excluded) != 0 {
		t.Fatalf("empty final set: %+v %v", got, err)
	}
}

func TestFinalSetInvalid(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	for name, f := range map[string]FinalSet{
		"unsorted":       {Included: []FinalRecord{{Validator: []byte("b")}, {Validator: []byte("a")}}},
		"duplicate":      {Excluded: [][]byte{[]byte("a"), []byte("a")}},
		"empty ID":       {Excluded: [][]byte{{}}},
		"long ID":        {Excluded: [][]byte{make([]byte, MaxPeerIDLen+1)}},
		"too many":       {Excluded: make([][]byte, MaxFinalValidators+1)},
		"included empty": {Included: []FinalRecord{{}}},
	} {
		if err := s.PutFinal(1, f); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good, _ := encodeFinal(FinalSet{Included: []FinalRecord{{Validator: []byte("a")}}, Excluded: [][]byte{[]byte("b")}})
	for name, v := range map[string][]byte{
		"empty":     {},
		"format":    append([]byte{2}, good[1:]...),
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte{}, good...), 0),
		"bad count": {1, 0xff, 0xff},
		"unsorted":  {1, 0, 0, 0, 2, 1, 'b', 1, 'a'},
	} {
		if _, err := decodeFinal(v); err == nil {
			t.Errorf("decode %s: accepted", name)
		}
	}
	if _, err := decodeFinal(good); err != nil {
		t.Fatal(err)
	}
}

func TestEquivocationProofsStored(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	for _, c := range []struct {
		epoch uint64
		v     string
	}{{7, "b"}, {7, "a"}, {2, "z"}} {
		ok, err := s.PutEquivocation(c.epoch, []byte(c.v), []byte("proof "+c.v))
		if !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	// The first proof of a key is kept.
	if ok, err := s.PutEquivocation(7, []byte("a"), []byte("another proof")); ok || err != nil {
		t.Fatalf("second proof: %v %v", ok, err)
	}
	if _, err := s.PutEquivocation(7, []byte("a"), make([]byte, MaxEquivocationLen+1)); err == nil {
		t.Fatal("oversized proof accepted")
	}
	closeStore(t, s)
	s = openMem(t, fs)
	defer closeStore(t, s)
	var got []string
	for e, err := range s.Equivocations(0, 100) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(e.Validator)+"="+string(e.Proof))
	}
	if want := []string{"z=proof z", "a=proof a", "b=proof b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("proofs %v, want %v", got, want)
	}
}

// FuzzDecodeFinal: whatever the disk holds, decoding never panics, and
// what decodes is canonical (re-encodes to the same bytes).
func FuzzDecodeFinal(f *testing.F) {
	good, _ := encodeFinal(FinalSet{Included: []FinalRecord{{Validator: []byte("a"), ID: [32]byte{1}}}, Excluded: [][]byte{[]byte("b")}})
	f.Add(good)
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		fs, err := decodeFinal(v)
		if err != nil {
			return
		}
		re, err := encodeFinal(fs)
		if err != nil || string(re) != string(v) {
			t.Fatalf("decoded %x, re-encoded %x (%v)", v, re, err)
		}
	})
}
