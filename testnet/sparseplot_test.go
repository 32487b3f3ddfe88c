package testnet

import (
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// TestSparsePlotEarnsItsStorage: a sparse-plot miner, whose plot is 32×
// its disk, is credited no more than 1.05× the storage part of an honest
// miner of its hardware, by every validator in every epoch, and earns no
// more than honest work. (Its walks run past the round's deadline, so its
// storage rounds are missed; with a step under the bound, as the plot of
// one chain per block gave it, its part is the cap's.)
func TestSparsePlotEarnsItsStorage(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 2
	cfg.Profiles, cfg.Adversaries = []string{"H100"}, []string{"sparse-plot"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	honest := honestOf(s, "H100")
	if honest == "" {
		t.Fatal("no honest H100 miner")
	}
	sparse, held := 0.0, 0.0
	for _, ep := range s.Epochs {
		for v, parts := range ep.Storage {
			if parts[honest] <= 0 {
				t.Fatalf("epoch %d, %s: the honest miner's storage part is %v", ep.Epoch, v, parts[honest])
			}
			if g := parts["sparse-plot"] / parts[honest]; g > adversary.MaxGain {
				t.Errorf("epoch %d, %s: sparse-plot's storage part %.4f is %.3f× the honest %.4f", ep.Epoch, v, parts["sparse-plot"], g, parts[honest])
			}
			sparse, held = sparse+parts["sparse-plot"], held+parts[honest]
		}
	}
	p, ok := adversary.ProfitOf(s, "sparse-plot")
	if !ok || p.Over() {
		t.Fatalf("sparse-plot: storage part %.4f in all; judged %v, %s", sparse, ok, adversary.GainDetail(p))
	}
	t.Logf("storage parts: sparse-plot %.4f, honest %.4f (%.3f×); %s", sparse, held, sparse/held, adversary.GainDetail(p))
}

// honestOf is the name of an honest miner of profile in s.
func honestOf(s *report.Summary, profile string) string {
	for _, n := range s.Nodes {
		if n.Role == "miner" && n.Adversary == "" && n.Profile == profile && n.AddedLatencyMs == 0 && !n.Loaded {
			return n.Name
		}
	}
	return ""
}
