package node

import (
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// epochPath are the package's files whose arithmetic reaches round records,
// epoch records or consensus; scheduling and display code elsewhere in it
// may fuse. Record sync (node/recordsync) only moves and verifies records
// and has no float arithmetic of its own, so it needs no check.
var epochPath = map[string]bool{"equivocation.go": true}

// TestNoFusedMultiplyAdd: audits compare round records, epoch records and
// consensus bit for bit across CPUs.
func TestNoFusedMultiplyAdd(t *testing.T) {
	fmacheck.Check(t, ".", func(f string) bool { return epochPath[f] }, "node.(*Node).onEpochRecord")
}
