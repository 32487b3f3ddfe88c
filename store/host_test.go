package store

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func testHost(epoch, round uint64, miner string) *HostRecord {
	r := &HostRecord{Epoch: epoch, Round: round, Miner: []byte(miner), Validator: []byte("validator"),
		Challenge: []byte{1, 2, 3}, RTTNanos: 1000, RootNanos: 5e6, Opening: []byte{4, 5}, VerifyNanos: 77,
		Verdict: VerdictVerified}
	r.Secret[0], r.Root[31] = 9, 8
	return r
}

func TestHostRecordRoundTrip(t *testing.T) {
	for _, r := range []*HostRecord{testHost(3, 7, "m"),
		{Epoch: 1, Round: 1, Miner: []byte("m"), Validator: []byte("v"), Challenge: []byte{1}, RTTNanos: 5,
			Verdict: VerdictFailed, Missed: true, Reason: "no root within 1s"}} {
		got, err := DecodeHost(EncodeHost(r))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip: %+v, want %+v", got, r)
		}
	}
}

// TestHostRecordHostile: every truncation and an appended byte are refused
// without a panic; so are records that break an invariant.
func TestHostRecordHostile(t *testing.T) {
	b := EncodeHost(testHost(3, 7, "m"))
	for n := range len(b) {
		if _, err := DecodeHost(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded", n)
		}
	}
	if _, err := DecodeHost(append(bytes.Clone(b), 0)); err == nil {
		t.Fatal("trailing byte decoded")
	}
	bad := map[string]func(*HostRecord){
		"verified with a reason":  func(r *HostRecord) { r.Reason = "x" },
		"verified without a root": func(r *HostRecord) { r.RootNanos = 0 },
		"failed without a reason": func(r *HostRecord) { r.Verdict = VerdictFailed },
		"negative rtt":            func(r *HostRecord) { r.RTTNanos = -1 },
		"no challenge":            func(r *HostRecord) { r.Challenge = nil },
		"zero verdict":            func(r *HostRecord) { r.Verdict = 0 },
	}
	for name, f := range bad {
		r := testHost(3, 7, "m")
		f(r)
		if _, err := DecodeHost(EncodeHost(r)); err == nil {
			t.Errorf("%s: decoded", name)
		}
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
	want := []*HostRecord{testHost(1, 2, "a"), testHost(2, 1, "b"), testHost(2, 3, "a")}
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
