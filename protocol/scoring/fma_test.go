package scoring

import (
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd compiles the package for arm64, where Go fuses
// x*y + z unless the product is converted explicitly, and fails on any fused
// instruction: scores must have the same bits on every CPU.
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
	for _, fn := range []string{"scoring.ScoreMiner", "scoring.Explain", "scoring.checkClaims", "scoring.Price", "scoring.Weights"} {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}
