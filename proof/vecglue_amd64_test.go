package proof

import (
	"testing"
	"unsafe"
)

// TestVecArgsLayout pins vecArgs to the offsets cmd vecgen assembles against.
func TestVecArgsLayout(t *testing.T) {
	var a vecArgs
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"rk", unsafe.Offsetof(a.rk), 0}, {"mask", unsafe.Offsetof(a.mask), 80},
		{"c0", unsafe.Offsetof(a.c0), 88}, {"c1", unsafe.Offsetof(a.c1), 96},
		{"r0x", unsafe.Offsetof(a.r0x), 104}, {"c3", unsafe.Offsetof(a.c3), 112},
		{"lines", unsafe.Offsetof(a.lines), 120}, {"chunks", unsafe.Offsetof(a.chunks), 128},
		{"r", unsafe.Offsetof(a.r), 136}, {"y", unsafe.Offsetof(a.y), 144},
		{"out", unsafe.Offsetof(a.out), 152}, {"words", unsafe.Offsetof(a.words), 160},
		{"ystride", unsafe.Offsetof(a.ystride), 168}, {"r0lo", unsafe.Offsetof(a.r0lo), 176},
	} {
		if f.got != f.want {
			t.Errorf("vecArgs.%s at %d, vecgen assumes %d", f.name, f.got, f.want)
		}
	}
}

// The round keys are Philox's key schedule: round i uses k + i·w.
func TestRoundKeys(t *testing.T) {
	rk := roundKeys([2]uint32{0xffffffff, 1})
	if rk[0] != 0xffffffff || rk[1] != 0x9E3779B8 || rk[10] != 1 || rk[19] != uint32(1+9*0xBB67AE85%(1<<32)) {
		t.Fatalf("round keys %08x", rk)
	}
}
