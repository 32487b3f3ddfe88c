package testnet

import (
	"strings"
	"testing"
)

// TestBeaconSplitLosesNoRAMRound runs the beacon-split validator, which
// publishes two records for each RAM period's last epoch at the period
// boundary, in a run whose RAM period is two epochs: every honest miner
// is verified in a RAM round of the new period, and none refuses a RAM
// round for a seed it does not hold (SPEC.md §23.9: the seed is a
// function of the period alone).
func TestBeaconSplitLosesNoRAMRound(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 2, 2
	cfg.Profiles, cfg.Adversaries = []string{"H100", "CPU"}, []string{"beacon-split"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	found := false
	for _, c := range s.Checks {
		if strings.HasPrefix(c.Name, "beacon-split") {
			found = true
			if !c.OK {
				t.Errorf("%s: %s", c.Name, c.Detail)
			}
			t.Log(c.Detail)
		}
	}
	if !found {
		t.Fatal("no beacon-split check ran")
	}
}
