package proof

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pog-network/pog/proof/commit"
)

func testParams(prec Precision) Params {
	p := Params{Precision: prec, Batch: 1, M: 128, K: 96, N: 64, Tile: 16, Miner: []byte("miner-a")}
	p.Nonce[0] = 42
	return p
}

func TestValidate(t *testing.T) {
	ok := testParams(FP16)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*Params)
	}{
		{"precision 0", func(p *Params) { p.Precision = 0 }},
		{"precision 3", func(p *Params) { p.Precision = 3 }},
		{"tile 8", func(p *Params) { p.Tile = 8 }},
		{"tile 48", func(p *Params) { p.Tile = 48 }},
		{"tile 1024", func(p *Params) { p.Tile = 1024 }},
		{"batch 0", func(p *Params) { p.Batch = 0 }},
		{"batch too big", func(p *Params) { p.Batch = MaxBatch + 1 }},
		{"M not multiple", func(p *Params) { p.M = 120 }},
		{"N zero", func(p *Params) { p.N = 0 }},
		{"M too big", func(p *Params) { p.M = MaxDim + 16 }},
		{"K zero", func(p *Params) { p.K = 0 }},
		{"K beyond fp16 exactness", func(p *Params) { p.K = 8193 }},
		{"K beyond fp32 exactness", func(p *Params) { p.Precision = FP32; p.K = 4097 }},
		{"no miner", func(p *Params) { p.Miner = nil }},
		{"long miner", func(p *Params) { p.Miner = make([]byte, MaxMinerID+1) }},
		{"one tile", func(p *Params) { p.M, p.N = 16, 16 }},
		{"output too big", func(p *Params) { p.Batch, p.M, p.N = MaxBatch, 1<<16, 1<<16 }},
	}
	for _, tt := range tests {
		p := ok
		tt.edit(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
}

// The exactness bound of SPEC.md: K·max|a|·max|b| <= 2^24.
func TestMaxK(t *testing.T) {
	for _, tt := range []struct {
		p    Precision
		want uint32
	}{{FP16, 8192}, {FP32, 4096}} {
		a, b := tt.p.MaxAbs()
		if got := tt.p.MaxK(); got != tt.want || int64(got)*a*b > 1<<24 {
			t.Errorf("%v: MaxK %d, want %d", tt.p, got, tt.want)
		}
	}
}

func TestParamsEncoding(t *testing.T) {
	p := testParams(FP32)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := DecodeParams(b)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := q.MarshalBinary(); !bytes.Equal(again, b) {
		t.Fatal("round trip differs")
	}
	for _, bad := range [][]byte{nil, b[:10], append(b, 0), append([]byte{2}, b[1:]...)} {
		if _, err := DecodeParams(bad); err == nil {
			t.Errorf("DecodeParams(%x) accepted", bad)
		}
	}
}

func FuzzDecodeParams(f *testing.F) {
	b, _ := testParams(FP16).MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeParams(b)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("decoded params invalid: %v", err)
		}
		if again, _ := p.MarshalBinary(); !bytes.Equal(again, b) {
			t.Fatal("re-encoding differs")
		}
	})
}

// Every field of the parameters changes the key: two identities, nonces or
// shapes never share a computation.
func TestKeyBindsEveryField(t *testing.T) {
	base := testParams(FP16)
	k0, _ := base.Key()
	edits := map[string]func(*Params){
		"precision": func(p *Params) { p.Precision = FP32 },
		"batch":     func(p *Params) { p.Batch = 2 },
		"M":         func(p *Params) { p.M = 144 },
		"K":         func(p *Params) { p.K = 97 },
		"N":         func(p *Params) { p.N = 80 },
		"tile":      func(p *Params) { p.Tile = 32 },
		"nonce":     func(p *Params) { p.Nonce[31] ^= 1 },
		"miner":     func(p *Params) { p.Miner = []byte("miner-b") },
	}
	for name, edit := range edits {
		p := base
		p.Miner = append([]byte(nil), base.Miner...)
		edit(&p)
		if k, err := p.Key(); err != nil || k == k0 {
			t.Errorf("changing %s keeps the key (%v)", name, err)
		}
	}
}

func TestGeneratedValueSets(t *testing.T) {
	for _, prec := range []Precision{FP16, FP32} {
		p := testParams(prec)
		p.K = 4096
		g, _ := NewGenerator(p)
		a, b := make([]int32, p.K), make([]int32, p.K)
		Line(g, MatA, 0, 3, a)
		Line(g, MatB, 0, 3, b)
		amax, bmax := prec.MaxAbs()
		count := map[int32]int{}
		for i := range a {
			if int64(a[i]) < -amax || int64(a[i]) >= amax {
				t.Fatalf("%v: A value %d outside [-%d, %d)", prec, a[i], amax, amax)
			}
			if int64(b[i]) < -bmax || int64(b[i]) > bmax || (prec == FP32 && b[i] != 1 && b[i] != -1) {
				t.Fatalf("%v: B value %d outside its set", prec, b[i])
			}
			count[b[i]]++
		}
		// Uniform B: every value of the set appears near K/|set| times.
		for v, n := range count {
			if want := float64(p.K) / float64(len(count)); math.Abs(float64(n)-want) > 6*math.Sqrt(want) {
				t.Errorf("%v: B value %d appears %d times, want about %.0f", prec, v, n, want)
			}
		}
	}
}

// A line generated alone equals the same line generated as part of a longer
// one: any tile's inputs are addressable without the rest of the matrix.
func TestLinesAreAddressable(t *testing.T) {
	p := testParams(FP16)
	long := p
	long.K = 8000
	g, _ := NewGenerator(p)
	row := make([]int32, p.K)
	Line(g, MatA, 0, 7, row)
	// Same key, longer K: the prefix agrees because element p depends only
	// on (p, line, matrix, batch).
	gl := *g
	gl.k = long.K
	full := make([]int32, long.K)
	Line(&gl, MatA, 0, 7, full)
	if !equal32(row, full[:p.K]) {
		t.Fatal("line prefix depends on the line length")
	}
}

// The reference deployment's Hankel matrices (value depends on i+j) let C be
// derived in O(n²). Here shifted rows and columns must be unrelated: the
// agreement rate between A[i][j+s] and A[i+s][j] is what chance gives.
func TestNoShiftStructure(t *testing.T) {
	p := testParams(FP16)
	p.K = 2048
	g, _ := NewGenerator(p)
	rows := make([][]int32, 9)
	for i := range rows {
		rows[i] = make([]int32, p.K)
		Line(g, MatA, 0, uint32(i), rows[i])
	}
	for s := 1; s < 8; s++ {
		same := 0
		n := 0
		for i := 0; i+s < len(rows); i++ {
			for j := 0; j+s < int(p.K); j++ {
				if rows[i][j+s] == rows[i+s][j] {
					same++
				}
				if rows[i][j+s] == rows[i][j] {
					same++
				}
				n += 2
			}
		}
		chance := 1.0 / 512
		if rate := float64(same) / float64(n); math.Abs(rate-chance) > 6*math.Sqrt(chance/float64(n)) {
			t.Errorf("shift %d: agreement %.5f, chance %.5f", s, rate, chance)
		}
	}
	// Different batch, matrix or line: unrelated streams.
	a0 := make([]int32, p.K)
	Line(g, MatA, 0, 0, a0)
	for _, other := range []struct {
		m    Matrix
		b, i uint32
	}{{MatA, 1, 0}, {MatB, 0, 0}, {MatA, 0, 1}} {
		o := make([]int32, p.K)
		Line(g, other.m, other.b, other.i, o)
		if equal32(a0, o) {
			t.Errorf("stream %+v equals A row 0", other)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/vectors.txt")

// TestVectors pins generation and the commitment root of small challenges so
// other implementations (the CUDA kernels, a second client) can check
// themselves against testdata/vectors.txt. Regenerate only with a new
// KeyContext: go test ./proof -run TestVectors -update.
func TestVectors(t *testing.T) {
	var out bytes.Buffer
	for _, prec := range []Precision{FP16, FP32} {
		p := Params{Precision: prec, Batch: 2, M: 32, K: 20, N: 48, Tile: 16, Miner: vectorMiner()}
		for i := range p.Nonce {
			p.Nonce[i] = byte(i)
		}
		enc, _ := p.MarshalBinary()
		key, _ := p.Key()
		g, _ := NewGenerator(p)
		a, b := make([]int32, p.K), make([]int32, p.K)
		Line(g, MatA, 1, 5, a)
		Line(g, MatB, 1, 7, b)
		data := honestOutput(t, p)
		leaves, _ := commit.TileCVs(data, p.TileBytes(), 0)
		root, _ := commit.Root(leaves)
		fmt.Fprintf(&out, "%s params=%x\n%s key=%x\n%s A[1] row 5=%v\n%s B[1] col 7=%v\n%s tile 7 cv=%x\n%s root=%x\n",
			prec, enc, prec, key, prec, a, prec, b, prec, leaves[7], prec, root)
	}
	path := filepath.Join("testdata", "vectors.txt")
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("vectors changed:\n%s\nwant:\n%s", out.Bytes(), want)
	}
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// honestOutput computes the serialised output naively, tile by tile.
func honestOutput(t testing.TB, p Params) []byte {
	g, err := NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, p.OutputBytes())
	for i := uint64(0); i < p.Tiles(); i++ {
		EncodeTile(out[i*uint64(p.TileBytes()):], ReferenceTile(g, p, i))
	}
	return out
}
