package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// TestCPUOutsourceGroup runs one honest H200 miner beside the
// cpu-outsource adversary's four identities, which share one H200 host
// and whose CPU host rounds one server of its cores answers, in virtual
// time: together they prove at most four times the honest host's CPU
// part (each proves the whole server, SPEC §23.7), and earn no more than
// identities time-sharing one device may (§16) with those extra CPU parts.
func TestCPUOutsourceGroup(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 3
	cfg.Profiles, cfg.Adversaries = []string{"H200"}, []string{"cpu-outsource"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	for _, c := range []report.Check{adversary.CPUOutsourceCheck(s), adversary.PaidCheck("cpu-outsource", s)} {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		} else {
			t.Logf("%s: %s", c.Name, c.Detail)
		}
	}
}
