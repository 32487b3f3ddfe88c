package testnet

import (
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// TestAbsentEarnsItsPresence runs the absent adversary, connected to each
// validator for one owned slot per epoch, beside an honest miner of its
// hardware: it earns no more than 1.05× its presence's share of the
// honest miner's pay, since every owned slot it skips is a no-show.
//
// With the squatter beside it (a listed validator with no stake) the
// absent miner still follows the staked validators' slots, and the public
// audit of the squatted miner names the squatter.
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
	i := slices.IndexFunc(s.Checks, func(c report.Check) bool { return strings.Contains(c.Name, "squatted miner") })
	if i < 0 || !s.Checks[i].OK {
		t.Fatalf("the audit of the squatted miner: %+v", s.Checks[i:min(i+1, len(s.Checks))])
	}
	t.Log(s.Checks[i].Detail)
}
