package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
)

// TestLoadedMinerCreditedItsMeanRate runs two identical CPU miners, one
// with a CPU job beside it for a third of every epoch (slowing its host
// CPU and its device 4×), in virtual time: per validator its CPU part is
// at least its twin's times the share of host slots clear of the job, and
// it never earns more than its twin.
func TestLoadedMinerCreditedItsMeanRate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 3
	cfg.Profiles, cfg.Adversaries = []string{"CPU"}, []string{"loaded"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	if c := adversary.LoadedCheck(s); !c.OK {
		t.Fatalf("%s: %s", c.Name, c.Detail)
	} else {
		t.Log(c.Detail)
	}
}
