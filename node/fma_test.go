package node

import (
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd compiles the package for arm64 and fails on any
// fused multiply-add: round records, epoch records and consensus inputs are
// computed here (and scoring and proof code is inlined here), and audits
// compare them bit for bit across CPUs.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	hits, listing, err := fmacheck.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("fused multiply-add (wrap the product in float64()): %s", h)
	}
	for _, fn := range []string{"node.(*EpochScorer).score", "node.Pricing", "node.Audit"} {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}
