package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
)

// TestLoadedMinerEarnsLikeItsTwin runs two identical CPU miners, one with
// a CPU job beside it for a third of every epoch (slowing its host CPU
// and its device 4×), in virtual time: their weights stay within 10 % in
// every epoch.
func TestLoadedMinerEarnsLikeItsTwin(t *testing.T) {
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
