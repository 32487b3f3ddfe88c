package testnet

import (
	"math"
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// TestSwarmLeavesHonestIntact runs a small network twice with one seed,
// without and with the swarm (5,000 identities that announce and never
// compute, more than a validator's validator.max_miners (64 in testnets)): each honest
// miner's verified rounds and mean incentive stay within 5 % of the run
// without it, and the swarm's own check (records, consensus, no pay)
// passes.
func TestSwarmLeavesHonestIntact(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 2, 2
	cfg.Profiles = []string{"H100", "A100"}
	cfg.Out = t.TempDir()
	base := runSim(t, cfg)
	cfg.Adversaries, cfg.Out, cfg.Swarm = []string{"swarm"}, t.TempDir(), adversary.SwarmIdentities
	swarm := runSim(t, cfg)
	for _, c := range swarm.Checks {
		if !c.OK {
			t.Errorf("check failed: %s: %s", c.Name, c.Detail)
		}
		if c.Name == "adversary swarm leaves records and consensus intact and earns nothing" {
			t.Log(c.Detail)
		}
	}
	for _, m := range []string{"miner-1", "miner-2"} {
		v0, v1 := verifiedRounds(base, m), verifiedRounds(swarm, m)
		i0, i1 := adversary.MeanIncentive(base, m), adversary.MeanIncentive(swarm, m)
		t.Logf("%s: verified rounds %d → %d, mean incentive %.4f → %.4f", m, v0, v1, i0, i1)
		if v0 == 0 || i0 <= 0 || math.Abs(float64(v1-v0)) > 0.05*float64(v0) || math.Abs(i1-i0) > 0.05*i0 {
			t.Errorf("%s: the swarm moved it by more than 5 %%: verified %d → %d, incentive %.4f → %.4f", m, v0, v1, i0, i1)
		}
	}
}

func verifiedRounds(s *report.Summary, miner string) int {
	n := 0
	for _, e := range s.Epochs {
		n += e.Verdicts[miner].Verified
	}
	return n
}
