package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// TestRAMRebuildGroup runs one honest H200 miner beside the ram-rebuild
// adversary's three identities, which share one H200 host and hold its
// RAM dataset one at a time, rebuilding it for whichever identity's RAM
// round the host could not answer, in virtual time: every identity's RAM
// round falls in the same host slot, so together they are credited at
// most one host's RAM (SPEC §16), and earn no more than identities
// time-sharing one device may.
func TestRAMRebuildGroup(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 3
	cfg.Profiles, cfg.Adversaries = []string{"H200"}, []string{"ram-rebuild"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	for _, c := range []report.Check{adversary.RAMRebuildCheck(s), adversary.PaidCheck("ram-rebuild", s)} {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		} else {
			t.Logf("%s: %s", c.Name, c.Detail)
		}
	}
}
