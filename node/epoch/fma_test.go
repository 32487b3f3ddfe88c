package epoch

import (
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: the package's arithmetic reaches epoch records and
// consensus, which audits compare bit for bit across CPUs, so none of it may
// fuse on arm64.
func TestNoFusedMultiplyAdd(t *testing.T) {
	fmacheck.Check(t, ".", nil, "epoch.(*Scorer).score", "epoch.Pricing")
}
