package explore

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

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

// TestExploreScheduled runs the first seed of the smallest networks of
// 30 s epochs that draws the slot schedule and one of the classes that
// play it, and requires every invariant to hold.
func TestExploreScheduled(t *testing.T) {
	small := ranges{validators: [2]int{2, 2}, miners: [2]int{2, 2}, epochs: [2]int{2, 2}, epochSeconds: [2]int{30, 30}}
	for seed := int64(1); seed <= 100; seed++ {
		cfg := config(seed, t.TempDir(), small)
		if !cfg.SlotSchedule || len(cfg.Adversaries) == 0 {
			continue
		}
		s := runSim(t, cfg)
		for _, f := range Failures(s, nil) {
			t.Errorf("seed %d: %s", seed, f)
		}
		t.Logf("seed %d (%.0f s here): %s", seed, s.WallSeconds, Line(cfg))
		return
	}
	t.Fatal("no seed of 100 drew the slot schedule with an adversary that plays it")
}

// TestExploreSeeds: a seed always draws the same network and faults, and
// at least one fault; seeds of 30 s epochs and more draw the slot schedule
// and the classes that play it, shorter ones never.
func TestExploreSeeds(t *testing.T) {
	drawn := map[string]int{}
	for seed := int64(1); seed <= 50; seed++ {
		a, b := Config(seed, "x"), Config(seed, "x")
		if Line(a) != Line(b) || !a.Faults.Any() {
			t.Fatalf("seed %d: %s, then %s", seed, Line(a), Line(b))
		}
		if a.SlotSchedule && a.EpochLength < 30*time.Second {
			t.Fatalf("seed %d: slot schedule in %v epochs", seed, a.EpochLength)
		}
		for _, x := range a.Adversaries {
			if slices.Contains(scheduled, x) && !a.SlotSchedule {
				t.Fatalf("seed %d: %s without the slot schedule", seed, x)
			}
			drawn[x]++
		}
	}
	for _, x := range scheduled {
		if drawn[x] == 0 {
			t.Errorf("no seed of 50 drew %s", x)
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
