package cpu

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// putInt32s writes every exact product value (|v| < 2^24, negatives
// included) as its little-endian int32, and nothing past 4·len(src).
func TestPutInt32sLittleEndian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 259)
	for i := range src {
		src[i] = float32(rng.IntN(1<<25) - 1<<24)
	}
	src[0], src[1] = 1<<24-1, -(1<<24 - 1)
	dst := make([]byte, 4*len(src)+4)
	putInt32s(dst, src)
	for i, v := range src {
		if got := int32(binary.LittleEndian.Uint32(dst[4*i:])); got != int32(v) {
			t.Fatalf("value %d written as %d, want %d", i, got, int32(v))
		}
	}
	if tail := dst[4*len(src):]; string(tail) != "\x00\x00\x00\x00" {
		t.Fatalf("wrote past the values: % x", tail)
	}
}

// BenchmarkPutInt32s converts a 256 × 256 product (the testnet's step) to
// 16 × 16 tiles, as Multiply does. The reference, per-value, is the
// conversion before 2026-12-06: each value stored through its own
// subslice of the tile.
func BenchmarkPutInt32s(b *testing.B) {
	const n, t = 256, 16
	c, out := make([]float32, n*n), make([]byte, 4*n*n)
	for i := range c {
		c[i] = float32(i % 1000)
	}
	tileRow := func(row, J int) ([]byte, []float32) {
		I, r := row/t, row%t
		return out[4*((I*(n/t)+J)*t*t+r*t):], c[row*n+J*t:][:t]
	}
	b.Run("rows", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		for b.Loop() {
			for row := range n {
				for J := range n / t {
					putInt32s(tileRow(row, J))
				}
			}
		}
	})
	b.Run("per-value", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		for b.Loop() {
			for row := range n {
				for J := range n / t {
					dst, src := tileRow(row, J)
					for q, v := range src {
						d := dst[4*q:]
						_ = d[3]
						d[0], d[1], d[2], d[3] = byte(int32(v)), byte(int32(v)>>8), byte(int32(v)>>16), byte(int32(v)>>24)
					}
				}
			}
		}
	})
}
