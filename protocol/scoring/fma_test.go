package scoring

import (
	"testing"

	"github.com/pog-network/pog/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: scores must have the same bits on every CPU.
func TestNoFusedMultiplyAdd(t *testing.T) {
	fmacheck.Check(t, ".", nil, "scoring.ScoreMiner", "scoring.Explain", "scoring.checkClaims", "scoring.Price", "scoring.Weights")
}
