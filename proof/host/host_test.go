package host

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"lukechampine.com/blake3"
)

func TestNeeded(t *testing.T) {
	s := Shape{Chains: 2, Steps: 8, Segment: 2} // 4 segments per chain
	cases := []struct{ segs, want []uint64 }{
		{[]uint64{0}, []uint64{0}},                            // a chain's first segment starts from the seed
		{[]uint64{1}, []uint64{0, 1}},                         // others from the previous checkpoint
		{[]uint64{1, 2}, []uint64{0, 1, 2}},                   // shared checkpoints appear once
		{[]uint64{3, 4, 5}, []uint64{2, 3, 4, 5}},             // 4 starts chain 1: 3 is not its start
		{[]uint64{0, 2, 7}, []uint64{0, 1, 2, 6, 7}},          // gaps
		{[]uint64{4}, []uint64{4}},                            // chain 1's first segment
		{[]uint64{5, 7}, []uint64{4, 5, 6, 7}},                // two starts
		{[]uint64{0, 1, 2, 3}, []uint64{0, 1, 2, 3}},          // a whole chain
		{[]uint64{6}, []uint64{5, 6}},                         // inside chain 1
		{[]uint64{1, 3}, []uint64{0, 1, 2, 3}},                // interleaved
		{[]uint64{2, 4, 6}, []uint64{1, 2, 4, 5, 6}},          // across the chain boundary
		{[]uint64{3, 6}, []uint64{2, 3, 5, 6}},                // both chains
		{[]uint64{7}, []uint64{6, 7}},                         // the last
		{[]uint64{0, 4}, []uint64{0, 4}},                      // both firsts
		{[]uint64{1, 5}, []uint64{0, 1, 4, 5}},                // both seconds
		{[]uint64{2, 3, 4, 5, 6}, []uint64{1, 2, 3, 4, 5, 6}}, // a run over the boundary
	}
	for _, c := range cases {
		if got := s.Needed(c.segs); !slices.Equal(got, c.want) {
			t.Errorf("Needed(%v) = %v, want %v", c.segs, got, c.want)
		}
	}
}

func TestShapeCheck(t *testing.T) {
	for _, s := range []Shape{{0, 8, 2}, {1, 8, 3}, {1, 2, 2}, {1 << 11, 1 << 10, 1}, {1, 0, 1}} {
		if s.Check() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if err := (Shape{Chains: 1, Steps: 4, Segment: 2}).Check(); err != nil {
		t.Error(err)
	}
}

func states(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = LE64(uint64(i) * 977)
	}
	return out
}

func TestOpenAndCheck(t *testing.T) {
	s := Shape{Chains: 3, Steps: 12, Segment: 3}
	st := states(int(s.Leaves()))
	root, leaves, err := Commit("t", st)
	if err != nil {
		t.Fatal(err)
	}
	segs := Sample([32]byte{9}, root, []byte("challenge"), s, 5)
	op, err := Open(s, st, leaves, segs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CheckOpening("t", s, root, segs, op, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range s.Needed(segs) {
		if !bytes.Equal(got[i], st[i]) {
			t.Fatalf("state %d not returned", i)
		}
	}
	// The same states under another proof's tag are another tree.
	if _, err := CheckOpening("u", s, root, segs, op, 8); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("other tag: %v", err)
	}
	op.States = op.States[1:]
	if _, err := CheckOpening("t", s, root, segs, op, 8); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("short opening: %v", err)
	}
}

func TestOpeningEncoding(t *testing.T) {
	op := &Opening{States: states(3), Proof: commit.Proof{{1}, {2}}}
	b, err := op.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeOpening(b, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.States) != 3 || !bytes.Equal(back.States[2], op.States[2]) || len(back.Proof) != 2 || back.Proof[1] != op.Proof[1] {
		t.Fatalf("round trip lost data: %+v", back)
	}
	for _, bad := range [][]byte{nil, {0, 0}, b[:len(b)-1], append(append([]byte{}, b...), 0), {0xff, 0xff, 0xff, 0xff}} {
		if _, err := DecodeOpening(bad, 8); err == nil {
			t.Errorf("decoded %x", bad)
		}
	}
}

func FuzzDecodeOpening(f *testing.F) {
	op := &Opening{States: states(2), Proof: commit.Proof{{3}}}
	b, _ := op.MarshalBinary()
	f.Add(b, 8)
	f.Add([]byte{0, 0, 0, 1, 1}, 1)
	f.Fuzz(func(t *testing.T, b []byte, size int) {
		op, err := DecodeOpening(b, size)
		if err != nil {
			return
		}
		again, err := op.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded %x does not re-encode to itself (%v)", b, err)
		}
	})
}

func TestTiming(t *testing.T) {
	tm := Timing{Shape: Shape{Chains: 4, Steps: 1000, Segment: 100}, Elapsed: 2 * time.Millisecond}
	if err := tm.Check(); err != nil {
		t.Fatal(err)
	}
	if tm.StepNs() != 2000 || tm.StepsPerSecond() != 2e6 {
		t.Fatalf("step %v ns, %v steps/s", tm.StepNs(), tm.StepsPerSecond())
	}
	for _, c := range []struct{ bound, want float64 }{{4000, 1}, {2000, 1}, {500, 0.25}} {
		if got := tm.Credit(c.bound); got != c.want {
			t.Errorf("credit at bound %v: %v, want %v", c.bound, got, c.want)
		}
	}
	if (Timing{Shape: tm.Shape}).Check() == nil {
		t.Error("zero elapsed accepted")
	}
}

// TestDeriveMatchesBLAKE3: the one-chunk fast path and the long path give
// blake3.DeriveKey's output for material of every length around the chunk
// and block sizes, split into parts.
func TestDeriveMatchesBLAKE3(t *testing.T) {
	msg := make([]byte, 2100)
	for i := range msg {
		msg[i] = byte(i*7 + 3)
	}
	for _, n := range []int{0, 1, 8, 16, 63, 64, 65, 136, 1023, 1024, 1025, 2048, 2100} {
		var want [32]byte
		blake3.DeriveKey(want[:], contextPrefix+"test", msg[:n])
		if got := Derive("test", msg[:n/2], msg[n/2:n]); got != want {
			t.Errorf("%d bytes: %x, want %x", n, got, want)
		}
	}
}

// BenchmarkDerive: a checkpoint leaf's derive-key (8-byte index, 8-byte
// state), against blake3.DeriveKey on the same input in the same run.
func BenchmarkDerive(b *testing.B) {
	idx, st := LE64(7), LE64(9)
	b.Run("host.Derive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Derive("ram checkpoint", idx, st)
		}
	})
	// Leaf builds its context per call: it must not cost an allocation.
	b.Run("host.Leaf", func(b *testing.B) {
		b.ReportAllocs()
		for i := uint64(0); b.Loop(); i++ {
			Leaf("ram", i, st)
		}
	})
	b.Run("blake3.DeriveKey", func(b *testing.B) {
		b.ReportAllocs()
		var out [32]byte
		for b.Loop() {
			blake3.DeriveKey(out[:], contextPrefix+"ram checkpoint", append(append([]byte(nil), idx...), st...))
		}
	})
}
