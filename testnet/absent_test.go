package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
)

// TestAbsentEarnsItsPresence runs the absent adversary, connected to each
// validator for one owned slot per epoch, beside an honest miner of its
// hardware: it earns no more than 1.05× its presence's share of the
// honest miner's pay, since every owned slot it skips is a no-show.
//
// With the squatter beside it (a listed validator with no stake) the
// absent miner still follows the staked validators' slots.
func TestAbsentEarnsItsPresence(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 2
	cfg.Profiles, cfg.Adversaries = []string{"H100"}, []string{"absent", "squatter"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	p, ok := adversary.ProfitOf(s, "absent")
	if !ok || p.Over() || p.HonestIncentive <= 0 || p.Incentive <= 0 {
		t.Fatalf("absent: judged %v, %s", ok, adversary.GainDetail(p))
	}
	for _, n := range s.Nodes {
		if n.Name == "absent" && !(n.Presence > 0 && n.Presence < 0.5) {
			t.Fatalf("absent was present for %.3f of its owned slots", n.Presence)
		}
	}
	t.Log(adversary.GainDetail(p))
}
