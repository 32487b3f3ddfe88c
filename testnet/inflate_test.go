package testnet

import (
	"strings"
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
)

// runAdversary runs adversary a beside an honest miner of its hardware
// and returns its paid check, which quotes its gain.
func runAdversary(t *testing.T, a string) (gain, limit float64) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 2
	cfg.Profiles, cfg.Adversaries = []string{"H100"}, []string{a}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	p, ok := adversary.ProfitOf(s, a)
	if !ok || p.HonestIncentive <= 0 {
		t.Fatalf("%s: judged %v, %s", a, ok, adversary.GainDetail(p))
	}
	for _, c := range s.Checks {
		if strings.HasPrefix(c.Name, "adversary "+a+" ") {
			t.Logf("%s: %s", c.Name, c.Detail)
			if !c.OK {
				t.Errorf("check failed: %s: %s", c.Name, c.Detail)
			}
		}
	}
	return p.Gain, p.Limit
}

// TestMemoryInflateGainsNothing: slow pongs, the largest capacity and GPUs
// announced after the epoch's first announce earn no more than honest
// work on the same device.
func TestMemoryInflateGainsNothing(t *testing.T) {
	if g, l := runAdversary(t, "memory-inflate"); g > l {
		t.Errorf("memory-inflate gains %.3f > %.3f", g, l)
	}
}

// TestGPUOverannounceBurstBound: one device announcing 16 GPUs and
// bursting its roots gains at most one step of the configured chain.
func TestGPUOverannounceBurstBound(t *testing.T) {
	g, l := runAdversary(t, "gpu-overannounce")
	if g > l {
		t.Errorf("gpu-overannounce gains %.3f > %.3f", g, l)
	}
	if l != adversary.OverannounceLimit() {
		t.Errorf("judged against %.3f, want 1/(D−2) = %.3f", l, adversary.OverannounceLimit())
	}
}
