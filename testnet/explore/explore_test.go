package explore

import (
	"testing"
	"testing/synctest"

	"github.com/pog-network/pog/testnet"
	"github.com/pog-network/pog/testnet/report"
)

// TestExplore runs a few seeds of fault exploration on the smallest
// networks (2 validators, 2 miners, 2 epochs of 20 s, one adversary at
// most) and requires every invariant to hold.
func TestExplore(t *testing.T) {
	tiny := ranges{validators: [2]int{2, 2}, miners: [2]int{2, 2}, epochs: [2]int{2, 2}, epochSeconds: [2]int{20, 20}, adversaries: 1}
	for seed := int64(1); seed <= 2; seed++ {
		cfg := config(seed, t.TempDir(), tiny)
		s := runSim(t, cfg)
		for _, f := range Failures(s, nil) {
			t.Errorf("seed %d: %s", seed, f)
		}
		t.Logf("seed %d (%.0f s here): %s", seed, s.WallSeconds, Line(cfg))
	}
}

// TestExploreSeeds: a seed always draws the same network and faults, and
// at least one fault.
func TestExploreSeeds(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		a, b := Config(seed, "x"), Config(seed, "x")
		if Line(a) != Line(b) || !a.Faults.Any() {
			t.Fatalf("seed %d: %s, then %s", seed, Line(a), Line(b))
		}
	}
}

// runSim runs cfg in virtual time, as pog testnet --explore does.
func runSim(t *testing.T, cfg testnet.Config) *report.Summary {
	t.Helper()
	cfg.Sim = true
	var s *report.Summary
	synctest.Test(t, func(t *testing.T) {
		var err error
		if s, err = testnet.Run(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	})
	return s
}
