package commit

import (
	"testing"

	"lukechampine.com/blake3/guts"
)

// Counters around and above 2^32 check the carry into the high counter word.
var testCounters = []uint64{0, 16, 1<<32 - 5, 1 << 32, 1<<40 + 3, 1<<64 - 17}

func needAVX512(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512")
	}
}

func TestHashChunks16(t *testing.T) {
	needAVX512(t)
	buf := (*[16 * ChunkSize]byte)(randomBytes(3, 16*ChunkSize))
	for _, c := range testCounters {
		var cvs [16][8]uint32
		hashChunks16(&cvs, buf, c)
		for i := range cvs {
			want := guts.ChainingValue(guts.CompressChunk(buf[i*ChunkSize:(i+1)*ChunkSize], &guts.IV, c+uint64(i), 0))
			if cvs[i] != want {
				t.Errorf("counter %#x chunk %d: %x, want %x", c, i, cvs[i], want)
			}
		}
	}
}

func TestHashParents16(t *testing.T) {
	needAVX512(t)
	var in [32][8]uint32
	r := randomBytes(4, 32*32)
	for i := range in {
		in[i] = cvToWords(CV(r[32*i:]))
	}
	var out [16][8]uint32
	hashParents16(&out, &in)
	for i := range out {
		if want := parentCV(in[2*i], in[2*i+1]); out[i] != want {
			t.Errorf("parent %d: %x, want %x", i, out[i], want)
		}
	}
}

// TestTileCVPaths checks the AVX-512 tile hasher against the guts fallback.
func TestTileCVPaths(t *testing.T) {
	needAVX512(t)
	for tile := group; tile <= MaxTileBytes; tile *= 2 {
		data := randomBytes(uint64(tile), tile)
		for _, c := range testCounters {
			if got, want := tileCV(data, c), tileCVGuts(data, c); got != want {
				t.Errorf("tile %d counter %#x: %x, want %x", tile, c, got, want)
			}
		}
	}
}

// TestRootIsBLAKE3Guts runs TestRootIsBLAKE3 on the guts fallback.
func TestRootIsBLAKE3Guts(t *testing.T) {
	defer func(b bool) { useAVX512 = b }(useAVX512)
	useAVX512 = false
	TestRootIsBLAKE3(t)
}
