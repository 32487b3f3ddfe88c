package kdf

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
)

func reference(ctx string, m []byte) (out [32]byte) {
	blake3.DeriveKey(out[:], ctx, m)
	return out
}

// Every length around the chunk, SIMD-buffer and power-of-two edges, split
// into parts at random, gives blake3.DeriveKey's bytes.
func TestSumMatchesDeriveKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const ctx = "pog kdf test v1"
	c := New(ctx)
	var lengths []int
	for _, edge := range []int{0, 64, 1024, 2048, 4096, 16 * 1024, 32 * 1024, 48 * 1024, 64 * 1024} {
		for d := -2; d <= 2; d++ {
			if edge+d >= 0 {
				lengths = append(lengths, edge+d)
			}
		}
	}
	lengths = append(lengths, 4136, 17*1024+5, 100_003)
	for _, n := range lengths {
		m := make([]byte, n)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		cut := rng.IntN(n + 1)
		if got, want := c.Sum(m[:cut], m[cut:]), reference(ctx, m); got != want {
			t.Errorf("%d bytes cut at %d: %x, blake3.DeriveKey %x", n, cut, got, want)
		}
	}
}

func FuzzSum(f *testing.F) {
	f.Add("ctx", []byte("material"), 3)
	f.Fuzz(func(t *testing.T, ctx string, m []byte, cut int) {
		cut = max(0, min(len(m), cut))
		if got, want := New(ctx).Sum(m[:cut], m[cut:]), reference(ctx, m); got != want {
			t.Fatalf("ctx %q, %d bytes: %x, blake3.DeriveKey %x", ctx, len(m), got, want)
		}
	})
}

// Sum against blake3.DeriveKey at the sizes the protocol derives from: a
// step nonce (104 bytes), a message body, a 4 KiB plot block.
func BenchmarkSum(b *testing.B) {
	c := New("pog kdf bench v1")
	for _, n := range []int{104, 1500, 4136} {
		m := make([]byte, n)
		b.Run(fmt.Sprintf("kdf/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				c.Sum(m)
			}
		})
		b.Run(fmt.Sprintf("blake3.DeriveKey/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var out [32]byte
			for b.Loop() {
				blake3.DeriveKey(out[:], "pog kdf bench v1", m)
			}
		})
	}
}
