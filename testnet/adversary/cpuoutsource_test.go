package adversary

import (
	"math"
	"testing"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/scoring"
)

// TestSharedServerCredit plays one CPU server's answers to k identities'
// CPU host rounds through the rounds' credit (hostround.CPUProof): rounds
// at different instants (today's schedule) each prove the whole server,
// k× in all; rounds started at one instant and answered in turn prove
// Σ_m min(1, f/m)/m (f: how many times faster than the step bound the
// server is), over 1.1× from k = 2 at f ≥ 2 (docs/design/0014); answered
// at once, sharing the cores, at most one server.
func TestSharedServerCredit(t *testing.T) {
	const stepNs = scoring.CPUCyclesPerStep / 2.4 // an H200 profile's core
	f := cpuwork.StepBoundNs / stepNs
	sh := host.Shape{Chains: 96, Steps: 1 << 20, Segment: 1 << 12}
	one := time.Duration(float64(sh.Steps) * stepNs) // a round alone on the server
	rate := func(elapsed time.Duration) float64 {
		return hostround.CPUProof{Params: &cpuwork.Params{Shape: sh}}.Credited(elapsed).CPUStepsPerSecond
	}
	for _, c := range []struct {
		name    string
		k       int
		elapsed func(m, k int) time.Duration // identity m's (1-based) of k
		want    func(k int) float64
	}{
		{"apart", 4, func(m, k int) time.Duration { return one }, func(k int) float64 { return float64(k) }},
		{"at once, in turn", 4, func(m, k int) time.Duration { return time.Duration(m) * one }, func(k int) float64 {
			s := 0.0
			for m := 1; m <= k; m++ {
				s += min(1, f/float64(m)) / float64(m)
			}
			return s
		}},
		{"at once, shared", 4, func(m, k int) time.Duration { return time.Duration(k) * one }, func(k int) float64 {
			return min(1, f/float64(k))
		}},
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
