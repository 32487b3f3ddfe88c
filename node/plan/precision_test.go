package plan

import (
	"math"
	"testing"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/scoring"
)

// Over any run of rounds each class stays within one round of its share,
// and a class with share 0 is never picked.
func TestNextPrecisionFollowsShares(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shares []ClassShare
	}{
		{"default config", ClassShares(scoring.DefaultConfig())},
		{"fp16 only", []ClassShare{{proof.FP16, 1}, {proof.FP32, 0}}},
		{"thirds", []ClassShare{{proof.FP16, 1.0 / 3}, {proof.FP32, 2.0 / 3}}},
	} {
		counts := map[proof.Precision]int{}
		var seq []proof.Precision
		for n := 1; n <= 50; n++ {
			p := NextPrecision(tt.shares, counts)
			counts[p]++
			seq = append(seq, p)
			for _, s := range tt.shares {
				if d := math.Abs(float64(counts[s.Prec]) - s.Share*float64(n)); d > 1 {
					t.Fatalf("%s: after %d rounds %v has %d, share %.2f: off by %.2f (%v)", tt.name, n, s.Prec, counts[s.Prec], s.Share, d, seq)
				}
				if s.Share == 0 && counts[s.Prec] > 0 {
					t.Fatalf("%s: picked %v with share 0", tt.name, s.Prec)
				}
			}
		}
	}
	// The default 0.6/0.4 split starts fp16, fp32, fp16, fp32, fp16.
	counts := map[proof.Precision]int{}
	want := []proof.Precision{proof.FP16, proof.FP32, proof.FP16, proof.FP32, proof.FP16}
	for i, w := range want {
		p := NextPrecision(ClassShares(scoring.DefaultConfig()), counts)
		counts[p]++
		if p != w {
			t.Fatalf("round %d: %v, want %v", i, p, w)
		}
	}
}
