package plot

import (
	"testing"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host/internal/decodetest"
)

// TestDecodeAudit: plot and audit encodings round-trip; truncations, a
// trailing byte and an out-of-bounds field are refused.
func TestDecodeAudit(t *testing.T) {
	a := audit(tiny("miner"), commit.CV{7})
	a.Seed[3] = 9
	decodetest.Check(t, a.Encode(), a, DecodeAudit)
	decodetest.Check(t, a.Plot.Encode(), &a.Plot, DecodePlot)
	bad := a.Plot
	bad.Rounds = MaxRounds + 1
	if _, err := DecodePlot(bad.Encode()); err == nil {
		t.Fatal("a plot beyond its bound decoded")
	}
}
