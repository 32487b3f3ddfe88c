package audit

import (
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: an audit recomputes round records, epoch records
// and consensus and compares them bit for bit with what a validator on
// another CPU published, so none of the package's arithmetic may fuse.
func TestNoFusedMultiplyAdd(t *testing.T) {
	fmacheck.Check(t, ".", nil, "audit.Audit", "audit.Round")
}
