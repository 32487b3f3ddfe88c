package sample

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		f, p  float64
		tiles uint64
		want  int
	}{
		{0.10, 0.999, 1 << 20, 66}, // BRIEF §4
		{0.10, 0.99, 1 << 20, 44},
		{0.01, 0.999, 1 << 20, 688},
		{0.50, 0.5, 1 << 20, 1},
		{0.10, 0.999, 40, 40}, // capped: every tile opened
	}
	for _, tt := range tests {
		k, err := Count(tt.f, tt.p, tt.tiles)
		if err != nil || k != tt.want {
			t.Errorf("Count(%v, %v, %d) = %d, %v; want %d", tt.f, tt.p, tt.tiles, k, err, tt.want)
		}
		if k < int(tt.tiles) {
			if got := 1 - math.Pow(1-tt.f, float64(k)); got < tt.p {
				t.Errorf("k=%d gives %v < %v", k, got, tt.p)
			}
			if got := 1 - math.Pow(1-tt.f, float64(k-1)); got >= tt.p {
				t.Errorf("k-1=%d already gives %v: k not minimal", k-1, got)
			}
			if d := DetectProbability(k, tt.f, tt.tiles); d < tt.p {
				t.Errorf("without replacement %v < %v", d, tt.p)
			}
		}
	}
	for _, bad := range [][2]float64{{0, 0.9}, {1, 0.9}, {0.1, 1}, {0.1, 0}, {math.NaN(), 0.5}} {
		if _, err := Count(bad[0], bad[1], 100); err == nil {
			t.Errorf("Count(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// TestDetectionEmpirical plays the sampling game: a miner fakes a random 10%
// of tiles, the validator samples Count tiles; the observed catch rate must
// match DetectProbability.
func TestDetectionEmpirical(t *testing.T) {
	const tiles, trials = 1024, 20000
	k, _ := Count(0.10, 0.99, tiles)
	want := DetectProbability(k, 0.10, tiles)
	r := rand.New(rand.NewPCG(7, 7))
	caught := 0
	for trial := 0; trial < trials; trial++ {
		fake := map[uint64]bool{}
		for len(fake) < int(math.Ceil(0.10*tiles)) {
			fake[r.Uint64N(tiles)] = true
		}
		var secret, root [32]byte
		binaryPut(secret[:], r.Uint64())
		binaryPut(root[:], r.Uint64())
		for _, i := range Indices(secret, root, nil, tiles, k) {
			if fake[i] {
				caught++
				break
			}
		}
	}
	got := float64(caught) / trials
	sd := math.Sqrt(want * (1 - want) / trials)
	if math.Abs(got-want) > 5*sd+1e-4 {
		t.Fatalf("caught %.5f of lazy miners, DetectProbability says %.5f", got, want)
	}
}

func binaryPut(b []byte, x uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(x >> (8 * i))
	}
}

func TestIndices(t *testing.T) {
	var secret, root [32]byte
	secret[0], root[0] = 1, 2
	a := Indices(secret, root, []byte("p"), 1000, 66)
	b := Indices(secret, root, []byte("p"), 1000, 66)
	if len(a) != 66 {
		t.Fatalf("got %d indices", len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("not deterministic")
		}
		if a[i] >= 1000 || (i > 0 && a[i] <= a[i-1]) {
			t.Fatalf("index %d = %d: not sorted, distinct and in range", i, a[i])
		}
	}
	// Any change of input gives another sample.
	root[31] ^= 1
	c := Indices(secret, root, []byte("p"), 1000, 66)
	secret[31] ^= 1
	d := Indices(secret, root, []byte("p"), 1000, 66)
	if equal(a, c) || equal(c, d) || equal(a, Indices(secret, root, []byte("q"), 1000, 66)) {
		t.Fatal("sample does not depend on every input")
	}
	if all := Indices(secret, root, nil, 5, 9); len(all) != 5 || all[4] != 4 {
		t.Fatalf("k >= tiles: got %v", all)
	}
	if Commit(secret) == Commit(root) || Commit(secret) != Commit(secret) {
		t.Fatal("commitment not a function of the secret")
	}
}

func equal(a, b []uint64) bool {
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
