package audit

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
// an audit recomputes round records, epoch records and consensus and
// compares them bit for bit with what a validator on another CPU published.
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
		if filepath.Base(filepath.Dir(m[1])) == "audit" || strings.Contains(m[1], "/protocol/") || strings.Contains(m[1], "/proof/") {
			t.Errorf("fused multiply-add (wrap the product in float64()): %s", h)
		}
	}
	for _, fn := range []string{"audit.Audit", "audit.Round"} {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}
