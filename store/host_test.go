package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// TestPutHostInvalid: a record that breaks an invariant is not stored.
func TestPutHostInvalid(t *testing.T) {
	bad := map[string]func(*HostRecord){
		"verified with a reason": func(r *HostRecord) { r.Reason = "x" },
		"negative rtt":           func(r *HostRecord) { r.RTTNanos = -1 },
		"no challenge":           func(r *HostRecord) { r.Challenge = nil },
	}
	for name, f := range bad {
		r := recordtest.Host(3, 7, "m")
		f(r)
		s := openMem(t, vfs.NewMem())
		if err := s.PutHost(r); err == nil {
			t.Errorf("%s: stored", name)
		}
		closeStore(t, s)
	}
}

func TestPutHostRounds(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	defer closeStore(t, s)
	want := []*HostRecord{recordtest.Host(1, 2, "a"), recordtest.Host(2, 1, "b"), recordtest.Host(2, 3, "a")}
	for _, r := range []*HostRecord{want[2], want[0], want[1]} {
		if err := s.PutHost(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutHost(want[0]); !errors.Is(err, ErrExists) {
		t.Fatalf("second put: %v, want ErrExists", err)
	}
	var got []*HostRecord
	for r, err := range s.HostRounds(2, 2) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("epoch 2: %d records in the wrong order or content", len(got))
	}
	if err := s.PruneEvidence(2); err != nil {
		t.Fatal(err)
	}
	for r, err := range s.HostRounds(0, 1) {
		t.Fatalf("pruned epoch 1 still yields %v, %v", r, err)
	}
}
