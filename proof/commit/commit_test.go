package commit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lukechampine.com/blake3"
)

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestRootIsBLAKE3(t *testing.T) {
	for _, tileBytes := range []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 64 << 10, 256 << 10} {
		for _, tiles := range []int{2, 3, 5, 7, 8, 13, 16, 33, 47, 64, 100, 257, 1000} {
			if tileBytes*tiles > 8<<20 {
				continue
			}
			t.Run(fmt.Sprintf("tile=%d/n=%d", tileBytes, tiles), func(t *testing.T) {
				data := randomBytes(uint64(tileBytes*tiles), tileBytes*tiles)
				leaves, err := TileCVs(data, tileBytes, 3)
				if err != nil {
					t.Fatal(err)
				}
				root, err := Root(leaves)
				if err != nil {
					t.Fatal(err)
				}
				if want := blake3.Sum256(data); root != CV(want) {
					t.Fatalf("root %x, blake3 %x", root, want)
				}
			})
		}
	}
}

func TestRootMatchesB3sum(t *testing.T) {
	if _, err := exec.LookPath("b3sum"); err != nil {
		t.Skip("b3sum not installed (apt-get install b3sum)")
	}
	data := randomBytes(9, 11*(16<<10))
	path := filepath.Join(t.TempDir(), "out.bin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("b3sum", "--no-names", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	leaves, _ := TileCVs(data, 16<<10, 0)
	root, _ := Root(leaves)
	if got := strings.TrimSpace(string(out)); got != fmt.Sprintf("%x", root) {
		t.Fatalf("b3sum %s, root %x", got, root)
	}
}

func TestTileErrors(t *testing.T) {
	for _, n := range []int{0, 512, 1000, 3 << 10, 2 << 20} {
		if CheckTileBytes(n) == nil {
			t.Errorf("tile size %d accepted", n)
		}
	}
	if _, err := TileCVs(make([]byte, 3<<10), 2<<10, 1); err == nil {
		t.Error("partial tile accepted")
	}
	if _, err := Root(make([]CV, 1)); err == nil {
		t.Error("single-leaf root accepted")
	}
}

func setup(t testing.TB, tileBytes, tiles int) ([]byte, []CV, CV) {
	data := randomBytes(uint64(tiles), tileBytes*tiles)
	leaves, err := TileCVs(data, tileBytes, 0)
	if err != nil {
		t.Fatal(err)
	}
	root, err := Root(leaves)
	if err != nil {
		t.Fatal(err)
	}
	return data, leaves, root
}

func pick(leaves []CV, idx []uint64) []CV {
	out := make([]CV, len(idx))
	for i, x := range idx {
		out[i] = leaves[x]
	}
	return out
}

func TestProveVerify(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for tiles := 2; tiles <= 40; tiles++ {
		_, leaves, root := setup(t, 1<<10, tiles)
		sets := [][]uint64{}
		for i := 0; i < tiles; i++ {
			sets = append(sets, []uint64{uint64(i)})
		}
		for s := 0; s < 20; s++ {
			var idx []uint64
			for i := 0; i < tiles; i++ {
				if r.IntN(3) == 0 {
					idx = append(idx, uint64(i))
				}
			}
			if len(idx) > 0 {
				sets = append(sets, idx)
			}
		}
		for _, idx := range sets {
			p, err := Prove(leaves, idx)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := ProofLen(uint64(tiles), idx); n != len(p) {
				t.Fatalf("ProofLen %d, proof has %d", n, len(p))
			}
			if err := Verify(root, uint64(tiles), idx, pick(leaves, idx), p); err != nil {
				t.Fatalf("tiles=%d idx=%v: %v", tiles, idx, err)
			}
		}
	}
}

// Every single-bit change to tile data, proof, index, tile size or root must
// be rejected.
func TestVerifyRejectsBitFlips(t *testing.T) {
	const tileBytes, tiles = 1 << 10, 11
	data, leaves, root := setup(t, tileBytes, tiles)
	idx := []uint64{3, 4, 9}
	p, _ := Prove(leaves, idx)
	tileLeaves := func(d []byte, size int) []CV {
		out := make([]CV, len(idx))
		for i, x := range idx {
			out[i] = TileCV(d[int(x)*size:int(x+1)*size], x)
		}
		return out
	}
	if err := Verify(root, tiles, idx, tileLeaves(data, tileBytes), p); err != nil {
		t.Fatal(err)
	}
	t.Run("tile", func(t *testing.T) {
		for bit := 0; bit < tileBytes*8; bit += 7 {
			d := bytes.Clone(data)
			d[int(idx[1])*tileBytes+bit/8] ^= 1 << (bit % 8)
			if Verify(root, tiles, idx, tileLeaves(d, tileBytes), p) == nil {
				t.Fatalf("flipped tile bit %d accepted", bit)
			}
		}
	})
	t.Run("proof", func(t *testing.T) {
		for i := range p {
			for bit := 0; bit < 256; bit++ {
				q := append(Proof(nil), p...)
				q[i][bit/8] ^= 1 << (bit % 8)
				if Verify(root, tiles, idx, tileLeaves(data, tileBytes), q) == nil {
					t.Fatalf("flipped proof value %d bit %d accepted", i, bit)
				}
			}
		}
	})
	t.Run("root", func(t *testing.T) {
		for bit := 0; bit < 256; bit++ {
			r := root
			r[bit/8] ^= 1 << (bit % 8)
			if Verify(r, tiles, idx, tileLeaves(data, tileBytes), p) == nil {
				t.Fatalf("flipped root bit %d accepted", bit)
			}
		}
	})
	t.Run("index", func(t *testing.T) {
		for i := range idx {
			for bit := 0; bit < 64; bit++ {
				j := append([]uint64(nil), idx...)
				j[i] ^= 1 << bit
				if Verify(root, tiles, j, tileLeaves(data, tileBytes), p) == nil {
					t.Fatalf("flipped index %d bit %d accepted", i, bit)
				}
			}
		}
	})
	t.Run("tile size", func(t *testing.T) {
		// The same bytes read as half-size tiles give other leaves.
		half := tileLeaves(data, tileBytes/2)
		if Verify(root, tiles, idx, half, p) == nil {
			t.Fatal("half-size tiles accepted")
		}
		if Verify(root, tiles*2, idx, tileLeaves(data, tileBytes), p) == nil {
			t.Fatal("wrong tile count accepted")
		}
	})
}

func TestVerifyRejectsMalformed(t *testing.T) {
	_, leaves, root := setup(t, 1<<10, 9)
	p, _ := Prove(leaves, []uint64{2})
	tests := []struct {
		name   string
		idx    []uint64
		leaves []CV
		proof  Proof
	}{
		{"other index", []uint64{3}, pick(leaves, []uint64{2}), p},
		{"short proof", []uint64{2}, pick(leaves, []uint64{2}), p[1:]},
		{"long proof", []uint64{2}, pick(leaves, []uint64{2}), append(append(Proof{}, p...), CV{})},
		{"no indices", nil, nil, p},
		{"out of range", []uint64{9}, pick(leaves, []uint64{2}), p},
		{"duplicate", []uint64{2, 2}, pick(leaves, []uint64{2, 2}), p},
		{"unsorted", []uint64{3, 2}, pick(leaves, []uint64{3, 2}), p},
		{"leaf count", []uint64{2}, nil, p},
	}
	for _, tt := range tests {
		if err := Verify(root, 9, tt.idx, tt.leaves, tt.proof); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
}

func TestEncoding(t *testing.T) {
	_, leaves, _ := setup(t, 1<<10, 20)
	idx := []uint64{0, 5, 19}
	p, _ := Prove(leaves, idx)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := DecodeProof(b)
	if err != nil || len(q) != len(p) || q[len(q)-1] != p[len(p)-1] {
		t.Fatalf("proof round trip: %v", err)
	}
	got, err := DecodeIndices(MarshalIndices(idx), 20)
	if err != nil || len(got) != 3 || got[2] != 19 {
		t.Fatalf("indices round trip: %v %v", got, err)
	}
	bad := [][]byte{nil, {0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, append(b, 0), b[:len(b)-1]}
	for _, x := range bad {
		if _, err := DecodeProof(x); err == nil {
			t.Errorf("DecodeProof(%x) accepted", x)
		}
	}
	if _, err := DecodeIndices(MarshalIndices([]uint64{5, 5}), 20); err == nil {
		t.Error("duplicate indices accepted")
	}
	if _, err := DecodeIndices(MarshalIndices([]uint64{20}), 20); err == nil {
		t.Error("out-of-range index accepted")
	}
}

func FuzzDecodeProof(f *testing.F) {
	_, leaves, _ := setup(f, 1<<10, 5)
	p, _ := Prove(leaves, []uint64{1})
	b, _ := p.MarshalBinary()
	f.Add(b)
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProof(b)
		if err != nil {
			return
		}
		again, err := p.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzDecodeIndices(f *testing.F) {
	f.Add(MarshalIndices([]uint64{1, 2, 3}), uint64(10))
	f.Fuzz(func(t *testing.T, b []byte, n uint64) {
		idx, err := DecodeIndices(b, n)
		if err != nil {
			return
		}
		if !bytes.Equal(MarshalIndices(idx), b) {
			t.Fatal("re-encoding differs")
		}
		if _, err := ProofLen(n, idx); err != nil {
			t.Fatalf("decoded indices rejected by ProofLen: %v", err)
		}
	})
}

// FuzzVerify feeds arbitrary proofs and indices to the verifier: it must
// never panic and never accept anything but the real leaves.
func FuzzVerify(f *testing.F) {
	_, leaves, root := setup(f, 1<<10, 12)
	p, _ := Prove(leaves, []uint64{4, 7})
	b, _ := p.MarshalBinary()
	f.Add(b, MarshalIndices([]uint64{4, 7}))
	f.Fuzz(func(t *testing.T, pb, ib []byte) {
		p, err := DecodeProof(pb)
		if err != nil {
			return
		}
		idx, err := DecodeIndices(ib, 12)
		if err != nil {
			return
		}
		fake := make([]CV, len(idx))
		if Verify(root, 12, idx, fake, p) == nil {
			t.Fatal("zero leaves accepted")
		}
		if err := Verify(root, 12, idx, pick(leaves, idx), p); err == nil {
			if want, _ := Prove(leaves, idx); len(want) != len(p) {
				t.Fatal("accepted a proof of the wrong length")
			}
		}
	})
}
