package adversary

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/report"
)

// TestSharedServerCredit plays one CPU server's answers to k identities'
// CPU host rounds through the rounds' credit (hostround.CPUProof): rounds
// at different instants (the schedule before host slots) each prove the
// whole server, k× in all; rounds started at one instant (host slots)
// and answered in turn prove Σ_m min(1, f/m)/m (f: how many times faster
// than the step bound the server is), over 1.1× from k = 2 at f ≥ 2 but
// below H_⌊f⌋ + f·(π²/6 − Σ_{m≤⌊f⌋} 1/m²) for any k (SPEC §16): 2.90 at
// f = 3.75; answered at once, sharing the cores, at most one server.
func TestSharedServerCredit(t *testing.T) {
	const stepNs = scoring.CPUCyclesPerStep / 2.4 // an H200 profile's core
	f := cpuwork.StepBoundNs / stepNs
	sh := host.Shape{Chains: 96, Steps: 1 << 20, Segment: 1 << 12}
	one := time.Duration(float64(sh.Steps) * stepNs) // a round alone on the server
	rate := func(elapsed time.Duration) float64 {
		return hostround.CPUProof{Params: &cpuwork.Params{Shape: sh}}.Credited(elapsed).CPUStepsPerSecond
	}
	inTurn := func(k int) float64 {
		s := 0.0
		for m := 1; m <= k; m++ {
			s += min(1, f/float64(m)) / float64(m)
		}
		return s
	}
	// In turn, the group's credit grows with k towards a limit, below it
	// by at most f/k.
	h, sq := 0.0, 0.0
	for m := 1; float64(m) <= f; m++ {
		h, sq = h+1/float64(m), sq+1/float64(m*m)
	}
	if limit, at := h+f*(math.Pi*math.Pi/6-sq), inTurn(1<<20); !(at < limit && limit-at < f/(1<<20)) {
		t.Errorf("in turn, 2^20 identities: %.6f, limit %.6f", at, limit)
	}
	for _, c := range []struct {
		name    string
		k       int
		elapsed func(m, k int) time.Duration // identity m's (1-based) of k
		want    func(k int) float64
	}{
		{"apart", 4, func(m, k int) time.Duration { return one }, func(k int) float64 { return float64(k) }},
		{"at once, in turn", 4, func(m, k int) time.Duration { return time.Duration(m) * one }, inTurn},
		{"at once, shared", 4, func(m, k int) time.Duration { return time.Duration(k) * one }, func(k int) float64 {
			return min(1, f/float64(k))
		}},
		{"at once, in turn, many", 4096, func(m, k int) time.Duration { return time.Duration(m) * one }, inTurn},
	} {
		sum := 0.0
		for m := 1; m <= c.k; m++ {
			sum += rate(c.elapsed(m, c.k))
		}
		gain, want := sum/rate(one), c.want(c.k)
		if math.Abs(gain-want) > 1e-3*want {
			t.Errorf("%s: %d identities prove %.3f× one server, want %.3f×", c.name, c.k, gain, want)
		}
		t.Logf("%s: %d identities prove %.3f× one server (f = %.2f)", c.name, c.k, gain, f)
	}
}

// TestCPUOutsourceFigures: the group's check sums its identities' proven
// core·GHz against the honest miners of its profile (a loaded or delayed
// one, or one of another profile, is no reference) and fails past k
// hosts; the leak added to its incentive limit is k − 1 honest CPU parts
// over the honest score.
func TestCPUOutsourceFigures(t *testing.T) {
	c := scoring.DefaultConfig()
	ref := float64(c.Reference.CPUCores) * c.Reference.CPUGHz
	nodes := []report.Node{{Name: "miner-1", Role: "miner", Profile: "H200"}, {Name: "miner-2", Role: "miner", Profile: "H100"},
		{Name: "loaded", Role: "miner", Profile: "H200", Loaded: true}}
	for i := 1; i <= CPUOutsourceIdentities; i++ {
		nodes = append(nodes, report.Node{Name: fmt.Sprintf("cpu-outsource-%d", i), Role: "miner", Profile: "H200", Adversary: "cpu-outsource"})
	}
	for _, each := range []float64{2.4, 2.6} { // each identity's core·GHz against miner-1's 2.4
		s := &report.Summary{Nodes: nodes}
		for range 2 {
			e := report.Epoch{HostCPU: map[string]float64{"miner-1": 2.4, "miner-2": 50, "loaded": 0.1},
				Scores: map[string]map[string]float64{"v1": {"miner-1": 0.3}, "v2": {"miner-1": 0.5}}}
			for i := 1; i <= CPUOutsourceIdentities; i++ {
				e.HostCPU[fmt.Sprintf("cpu-outsource-%d", i)] = each
			}
			s.Epochs = append(s.Epochs, e)
		}
		ratio := CPUOutsourceIdentities * each / 2.4
		if got := CPUOutsourceCheck(s); got.OK != (ratio <= CPUOutsourceIdentities*MaxGain) || !strings.Contains(got.Detail, fmt.Sprintf("ratio %.2f", ratio)) {
			t.Errorf("each %.1f: %+v", each, got)
		}
		want := float64(CPUOutsourceIdentities-1) * c.CPUWeight * 2.4 / ref / 0.4
		if got := CPUOutsourceLeak(s, c); math.Abs(got-want) > 1e-12 {
			t.Errorf("leak %g, want %g", got, want)
		}
	}
}
