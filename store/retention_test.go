package store

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

func TestCheckpoints(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	v, w := []byte("validator"), []byte("other")
	for _, c := range []Checkpoint{
		{Epoch: 3, Validator: v, Penalties: map[string]float64{"m1": 0.5, "m2": 0}},
		{Epoch: 5, Validator: v, Penalties: map[string]float64{"m1": 0.25}},
		{Epoch: 6, Validator: w, Penalties: map[string]float64{"m9": 1}},
	} {
		if err := s.PutCheckpoint(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutCheckpoint(Checkpoint{Epoch: 5, Validator: v, Penalties: map[string]float64{"m1": 0.25}}); err != nil {
		t.Fatalf("same state again: %v", err)
	}
	if err := s.PutCheckpoint(Checkpoint{Epoch: 5, Validator: v}); !errors.Is(err, ErrExists) {
		t.Fatalf("different state: %v", err)
	}
	for _, c := range []struct {
		before uint64
		want   uint64
		found  bool
		pen    map[string]float64
	}{
		{0, 0, false, nil},
		{3, 0, false, nil},
		{4, 3, true, map[string]float64{"m1": 0.5}}, // zero penalties are left out
		{5, 3, true, map[string]float64{"m1": 0.5}},
		{100, 5, true, map[string]float64{"m1": 0.25}}, // the other validator's 6 is skipped
	} {
		got, found, err := s.LatestCheckpoint(v, c.before)
		if err != nil || found != c.found || (found && (got.Epoch != c.want || !reflect.DeepEqual(got.Penalties, c.pen))) {
			t.Errorf("before %d: %+v %v %v", c.before, got, found, err)
		}
	}
	for name, p := range map[string]map[string]float64{
		"negative": {"m": -1}, "above 1": {"m": 2}, "NaN": {"m": math.NaN()}, "empty key": {"": 0.5},
	} {
		if err := s.PutCheckpoint(Checkpoint{Epoch: 9, Validator: v, Penalties: p}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good, _ := EncodeCheckpointState(map[string]float64{"a": 0.5, "b": 0.25})
	for name, b := range map[string][]byte{
		"truncated": good[:len(good)-1], "trailing": append(append([]byte{}, good...), 0), "empty": {},
		"zero penalty": {0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0},
		"huge count":   {0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := DecodeCheckpointState(b); err == nil {
			t.Errorf("decode %s: accepted", name)
		}
	}
}

func TestPruneEvidence(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	for e := uint64(0); e < 6; e++ {
		if err := s.PutRound(recordtest.Round(e, 1, "m")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutAnnounce(e, []byte("m"), testEnvelope(e, "m")); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEpochRecord(e, []byte("v"), testEnvelope(e, "v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutCheckpoint(Checkpoint{Epoch: 3, Validator: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := s.PruneEvidence(4); err != nil {
		t.Fatal(err)
	}
	if err := s.PruneEvidence(2); err != nil { // lower: nothing happens
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openMem(t, fs)
	defer closeStore(t, s)
	if from, err := s.EvidenceFrom(); from != 4 || err != nil {
		t.Fatalf("EvidenceFrom = %d %v", from, err)
	}
	var epochs []uint64
	for _, r := range collect(t, s, 0, 10) {
		epochs = append(epochs, r.Epoch)
	}
	if !reflect.DeepEqual(epochs, []uint64{4, 5}) {
		t.Fatalf("rounds of epochs %v left, want [4 5]", epochs)
	}
	for e := uint64(0); e < 6; e++ {
		_, errA := s.Announce(e, []byte("m"))
		if (e < 4) != errors.Is(errA, ErrNotFound) {
			t.Errorf("announce of epoch %d: %v", e, errA)
		}
		if _, err := s.EpochRecord(e, []byte("v")); err != nil {
			t.Errorf("epoch record %d pruned: %v", e, err)
		}
	}
	if _, found, err := s.LatestCheckpoint([]byte("v"), 10); !found || err != nil {
		t.Errorf("checkpoint pruned: %v %v", found, err)
	}
}

// FuzzDecodeCheckpoint: decoding never panics, and what decodes is
// canonical.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, _ := EncodeCheckpointState(map[string]float64{"a": 0.5, "b": 1})
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		p, err := DecodeCheckpointState(v)
		if err != nil {
			return
		}
		re, err := EncodeCheckpointState(p)
		if err != nil || string(re) != string(v) {
			t.Fatalf("decoded %x, re-encoded %x (%v)", v, re, err)
		}
	})
}
