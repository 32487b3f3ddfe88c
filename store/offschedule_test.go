package store

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Off-schedule challenges are kept across a restart, at most MaxOffSchedule
// per signer and epoch, once each, and pruned with the round evidence.
func TestOffScheduleKeptBoundedAndPruned(t *testing.T) {
	fs := vfs.NewMem()
	s := openMem(t, fs)
	put := func(epoch uint64, signer string, n byte) bool {
		t.Helper()
		o := OffSchedule{Epoch: epoch, Signer: []byte(signer), At: int64(n), Envelope: []byte{n, 1, 2}}
		o.ID[0] = n
		ok, err := s.PutOffSchedule(o)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range byte(MaxOffSchedule + 3) {
		if ok := put(5, "squatter", i); ok != (i < MaxOffSchedule) {
			t.Errorf("challenge %d of one signer and epoch stored %v; at most %d are kept", i, ok, MaxOffSchedule)
		}
	}
	if put(5, "squatter", 0) || !put(5, "other", 0) || !put(6, "squatter", 0) {
		t.Error("the bound is per signer and epoch, and a stored challenge is kept once")
	}
	closeStore(t, s)
	s = openMem(t, fs)
	count := func(from, to uint64) map[string]int {
		out := map[string]int{}
		for o, err := range s.OffSchedules(from, to) {
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(o.Envelope, []byte{o.ID[0], 1, 2}) || o.At != int64(o.ID[0]) {
				t.Errorf("kept %+v: envelope or receipt changed", o)
			}
			out[string(o.Signer)]++
		}
		return out
	}
	if got := count(0, 10); got["squatter"] != MaxOffSchedule+1 || got["other"] != 1 {
		t.Errorf("after a restart: %v", got)
	}
	if err := s.PruneEvidence(6); err != nil {
		t.Fatal(err)
	}
	if got := count(0, 10); got["squatter"] != 1 || got["other"] != 0 {
		t.Errorf("after pruning below epoch 6: %v", got)
	}
	closeStore(t, s)
}
