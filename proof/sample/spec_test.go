package sample

import (
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/specvec"
)

// TestSpecVectors checks SPEC §8.2's sample-size vectors against Count, and
// each k against the definition in exact rationals parsed from the decimal
// text: (1-f)^k <= 1-P, and (1-f)^(k-1) > 1-P unless k is 1 or T.
func TestSpecVectors(t *testing.T) {
	lines, err := specvec.Block(specvec.Path(), "sample-size")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 5 {
		t.Fatalf("%d vectors", len(lines))
	}
	for _, l := range lines {
		fs := strings.Fields(l)
		if len(fs) != 4 {
			t.Fatalf("vector %q: want f P T k", l)
		}
		f, _ := strconv.ParseFloat(fs[0], 64)
		p, _ := strconv.ParseFloat(fs[1], 64)
		tiles, err := strconv.ParseUint(fs[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		k, err := Count(f, p, tiles)
		if fs[3] == "refused" {
			if err == nil {
				t.Errorf("%s: Count = %d, want refused", l, k)
			}
			continue
		}
		want, _ := strconv.Atoi(fs[3])
		if err != nil || k != want {
			t.Errorf("%s: Count = %d, %v", l, k, err)
			continue
		}
		fr, _ := new(big.Rat).SetString(fs[0])
		pr, _ := new(big.Rat).SetString(fs[1])
		one := big.NewRat(1, 1)
		miss := new(big.Rat).Sub(one, fr)
		bound := new(big.Rat).Sub(one, pr)
		pow := func(n int) *big.Rat {
			r := big.NewRat(1, 1)
			for range n {
				r.Mul(r, miss)
			}
			return r
		}
		if uint64(k) < tiles && pow(k).Cmp(bound) > 0 {
			t.Errorf("%s: (1-f)^%d > 1-P", l, k)
		}
		if k > 1 && uint64(k) < tiles && pow(k-1).Cmp(bound) <= 0 {
			t.Errorf("%s: k-1 = %d already suffices", l, k-1)
		}
	}
}

// Inputs that are not whole parts per million in (0, 1) are refused.
func TestCountResolution(t *testing.T) {
	for _, c := range [][2]float64{{1e-7, 0.5}, {0.1, 0.9999999}, {0.9999999, 0.5}, {0.1234565, 0.5}, {0.1, 0.9990004}} {
		if k, err := Count(c[0], c[1], 100); err == nil {
			t.Errorf("Count(%v, %v) = %d, want an error", c[0], c[1], k)
		}
	}
}
