package testnet

import (
	"testing"
	"time"

	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/report"
)

// TestFaultRestart crashes a validator mid-run and restarts it from its
// store, and fails a miner's store writes: the validator must resume with
// every round it had verified, the miner stop with ErrStoreFailed, and
// consensus stay identical.
func TestFaultRestart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs, cfg.EpochLength = 2, 2, 2, 20*time.Second
	shortEpochs(&cfg)
	cfg.Profiles = []string{"H200", "A100"}
	cfg.Faults = netlab.Faults{Crash: &netlab.Crash{Node: "validator-2", At: 25 * time.Second, Restart: 35 * time.Second},
		Store: &netlab.StoreFault{Node: "miner-2", At: 30 * time.Second}}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	for _, name := range []string{"no verified round lost", "nodes stop only by injected store faults, with ErrStoreFailed",
		"identical consensus on every node", "pog audit passes on every honest validator's store"} {
		c := checkNamed(s, name)
		if c == nil || !c.OK {
			t.Errorf("%s: %+v", name, c)
			continue
		}
		t.Logf("%s: %s", name, c.Detail)
	}
	var before, after int
	for _, rd := range s.Rounds {
		if rd.Validator == "validator-2" && rd.Verified {
			switch {
			case rd.AtSeconds < 25:
				before++
			case rd.AtSeconds > 35:
				after++
			}
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("validator-2 verified %d rounds before its crash and %d after its restart; want some of both", before, after)
	}
}

func checkNamed(s *report.Summary, name string) *report.Check {
	for i := range s.Checks {
		if s.Checks[i].Name == name {
			return &s.Checks[i]
		}
	}
	return nil
}
