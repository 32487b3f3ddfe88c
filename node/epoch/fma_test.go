package epoch

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

var listingPos = regexp.MustCompile(`\((\S+\.go):\d+\)`)

// TestNoFusedMultiplyAdd compiles the package for arm64 and fails on any
// fused multiply-add in it, or inlined into it from protocol/ and proof/:
// its arithmetic reaches epoch records and consensus, which audits compare
// bit for bit across CPUs.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	hits, listing, err := fmacheck.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		m := listingPos.FindStringSubmatch(h)
		if m == nil {
			t.Errorf("fused multiply-add at an unknown position: %s", h)
			continue
		}
		if filepath.Base(filepath.Dir(m[1])) == "epoch" || strings.Contains(m[1], "/protocol/") || strings.Contains(m[1], "/proof/") {
			t.Errorf("fused multiply-add (wrap the product in float64()): %s", h)
		}
	}
	for _, fn := range []string{"epoch.(*EpochScorer).score", "epoch.Pricing"} {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}
