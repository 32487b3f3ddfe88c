package testnet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// rankedSummary has n honest miners in the profiles' turn, each earning its
// profile's fp16 TFLOPS (a host-small H200 a tenth less), and swaps the
// incentives of the first H200 and H100 when swap is set.
func rankedSummary(n int, swap bool) (*report.Summary, []report.Node) {
	s := &report.Summary{}
	inc := map[string]float64{}
	for i := range n {
		p := machine.Profiles[i%len(machine.Profiles)]
		name := fmt.Sprintf("miner-%d", i+1)
		s.Nodes = append(s.Nodes, report.Node{Name: name, Role: "miner", Profile: p.Name, ProfileTFLOPS: p.FP16TFLOPS})
		inc[name] = p.FP16TFLOPS * (1 - float64(i)*1e-6)
		if p.Name == "H200-small-host" {
			inc[name] *= 0.9
		}
	}
	if swap {
		inc["miner-1"], inc["miner-2"] = inc["miner-2"], inc["miner-1"]
	}
	s.Epochs = []report.Epoch{{Epoch: 1, Incentive: inc}}
	return s, append([]report.Node(nil), s.Nodes...)
}

// TestRankingChecksAtScale: a large network's ranking checks judge every
// pair as a small one's do, and their details stay short: each profile's
// median and range, and the first pairs out of order with their count.
func TestRankingChecksAtScale(t *testing.T) {
	r := &run{cfg: Config{}}
	for _, tt := range []struct {
		miners     int
		swap       bool
		ok         bool
		wantDetail string
	}{
		{6, false, true, "miner-1(H200)="},
		{600, false, true, "H200 ×100 median"},
		{600, true, false, "pairs out of order, first: miner-1(H200)="},
	} {
		s, honest := rankedSummary(tt.miners, tt.swap)
		checks := r.rankingChecks(s, honest)
		if checks[0].OK != tt.ok || !strings.Contains(checks[0].Detail, tt.wantDetail) {
			t.Errorf("%d miners, swap %v: %v %q, want ok %v and %q", tt.miners, tt.swap, checks[0].OK, checks[0].Detail, tt.ok, tt.wantDetail)
		}
		if !checks[1].OK {
			t.Errorf("%d miners: host ranking failed: %s", tt.miners, checks[1].Detail)
		}
		for _, c := range checks {
			if len(c.Detail) > 2000 {
				t.Errorf("%d miners: %q detail of %d bytes", tt.miners, c.Name, len(c.Detail))
			}
		}
	}
}
