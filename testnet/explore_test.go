package testnet

import "testing"

// TestExplore runs a few seeds of fault exploration on the smallest
// networks (2 validators, 2 miners, 2 epochs of 20 s, one adversary at
// most) and requires every invariant to hold.
func TestExplore(t *testing.T) {
	tiny := exploreRanges{validators: [2]int{2, 2}, miners: [2]int{2, 2}, epochs: [2]int{2, 2}, epochSeconds: [2]int{20, 20}, adversaries: 1}
	for seed := int64(1); seed <= 2; seed++ {
		cfg := exploreConfig(seed, t.TempDir(), tiny)
		s := runSim(t, cfg)
		for _, f := range ExploreFailures(s, nil) {
			t.Errorf("seed %d: %s", seed, f)
		}
		t.Logf("seed %d (%.0f s here): %s", seed, s.WallSeconds, ExploreLine(cfg))
	}
}

// TestExploreSeeds: a seed always draws the same network and faults, and
// at least one fault.
func TestExploreSeeds(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		a, b := ExploreConfig(seed, "x"), ExploreConfig(seed, "x")
		if ExploreLine(a) != ExploreLine(b) || !a.Faults.Any() {
			t.Fatalf("seed %d: %s, then %s", seed, ExploreLine(a), ExploreLine(b))
		}
	}
}
