package node

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// epochPath are the files whose arithmetic reaches round records, epoch
// records or consensus; code inlined into them from protocol/ and proof/
// counts too. Scheduling and display code elsewhere in the package may fuse.
// (node/epoch and node/audit are on it whole; their own tests check them.)
var epochPath = map[string]bool{"validator.go": true, "equivocation.go": true, "sync.go": true, "sync_proofs.go": true}

var listingPos = regexp.MustCompile(`\((\S+\.go):\d+\)`)

// TestNoFusedMultiplyAdd compiles the package for arm64 and fails on any
// fused multiply-add on the epoch path: audits compare round records, epoch
// records and consensus bit for bit across CPUs.
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
		dir, file := filepath.Base(filepath.Dir(m[1])), filepath.Base(m[1])
		if (dir == "node" && epochPath[file]) || strings.Contains(m[1], "/protocol/") || strings.Contains(m[1], "/proof/") {
			t.Errorf("fused multiply-add (wrap the product in float64()): %s", h)
		}
	}
	for _, fn := range []string{"node.(*validator).closeEpoch"} {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}
