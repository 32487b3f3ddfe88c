package philox

import "testing"

// Known answers from the Random123 distribution (kat_vectors), shared with the
// CUDA generator's tests.
func TestKnownAnswers(t *testing.T) {
	tests := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, tt := range tests {
		if got := Block(tt.ctr, tt.key); got != tt.want {
			t.Errorf("Block(%08x, %08x) = %08x, want %08x", tt.ctr, tt.key, got, tt.want)
		}
	}
}

func BenchmarkBlock(b *testing.B) {
	var ctr [4]uint32
	key := [2]uint32{1, 2}
	var sink uint32
	b.SetBytes(16)
	for i := 0; i < b.N; i++ {
		ctr[0] = uint32(i)
		sink ^= Block(ctr, key)[0]
	}
	_ = sink
}
