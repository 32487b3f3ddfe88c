package store

import (
	"bytes"
	"encoding/binary"
	"sync"
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
	// A challenge whose ID starts 0xff sorts past prefix ‖ 0xff; it counts
	// against the bound all the same.
	high := OffSchedule{Epoch: 5, Signer: []byte("high"), At: 0xff, Envelope: []byte{0xff, 1, 2}}
	high.ID[0] = 0xff
	if ok, err := s.PutOffSchedule(high); !ok || err != nil {
		t.Fatalf("first challenge of a signer: %v, %v", ok, err)
	}
	for i := range byte(MaxOffSchedule) {
		if ok := put(5, "high", i); ok != (i < MaxOffSchedule-1) {
			t.Errorf("challenge %d of a signer after one whose ID starts 0xff stored %v", i+1, ok)
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

// FuzzDecodeOffSchedule: any key and value decode to an error or to the
// one entry PutOffSchedule writes as exactly them, within its bounds.
func FuzzDecodeOffSchedule(f *testing.F) {
	o := OffSchedule{Epoch: 5, Signer: []byte("squatter"), ID: [32]byte{7}, At: 1_800_000_000e9, Envelope: []byte("signed challenge")}
	key := append(offSchedulePrefix(o.Epoch, o.Signer), o.ID[:]...)
	val := append(binary.BigEndian.AppendUint64(nil, uint64(o.At)), o.Envelope...)
	f.Add(key, val)
	f.Add(key[:len(key)-1], val)
	f.Add(key, val[:8])
	f.Add([]byte{offScheduleTag}, []byte{})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		o, err := decodeOffSchedule(k, v)
		if err != nil {
			return
		}
		if n := len(o.Signer); n < 1 || n > MaxPeerIDLen || len(o.Envelope) < 1 || len(o.Envelope) > maxOffScheduleEnvelope {
			t.Fatalf("decoded a %d-byte signer and a %d-byte envelope", n, len(o.Envelope))
		}
		rk := append(offSchedulePrefix(o.Epoch, o.Signer), o.ID[:]...)
		rv := append(binary.BigEndian.AppendUint64(nil, uint64(o.At)), o.Envelope...)
		if !bytes.Equal(rk, k) || !bytes.Equal(rv, v) {
			t.Fatalf("%x → %x decodes to %+v, which is stored as %x → %x", k, v, o, rk, rv)
		}
	})
}

// Keeps of one signer racing each other (gossip and a round stream) stay
// within MaxOffSchedule: a node that kept more would serve more than the
// audit's fetch allows, and be judged a bad peer.
func TestOffScheduleBoundUnderConcurrentKeeps(t *testing.T) {
	s := openMem(t, vfs.NewMem())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				o := OffSchedule{Epoch: 5, Signer: []byte("squatter"), At: 1, Envelope: []byte{1}}
				o.ID[0], o.ID[1] = byte(w), byte(i)
				if _, err := s.PutOffSchedule(o); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, err := range s.OffSchedules(5, 5) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != MaxOffSchedule {
		t.Errorf("kept %d of 64 racing challenges of one signer, want %d", n, MaxOffSchedule)
	}
}
