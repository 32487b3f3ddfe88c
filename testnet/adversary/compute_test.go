package adversary

import "testing"

func TestRoundTiles(t *testing.T) {
	b := []byte{0xc1, 0x0a, 0, 0} // 2753: 12 bits, rounds to 2752 in fp16
	roundTiles(b)
	if v := int32(b[0]) | int32(b[1])<<8; v != 2752 {
		t.Fatalf("2753 rounded to %d, want 2752", v)
	}
}
