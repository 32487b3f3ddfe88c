package adversary

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/report"
)

// TestSharedServerWindow plays one CPU server answering k identities'
// windowed CPU host rounds, all started at one instant as host slots start
// them (CPUServer, in virtual time), through the rounds' credit
// (hostround.CPUProof): in turn, each to the last instant its root is on
// time, they prove together at most 1 + 1/40 of the server's rate (the
// window's slack; SPEC §23.2 states 1 + 1/19 + 1/40 with slowed pongs),
// whatever k, where rounds of fixed steps proved Σ min(1, f/m)/m (2.07
// at k = 4). An honest host alone proves its rate less its stop margin.
func TestSharedServerWindow(t *testing.T) {
	h := &pb.Hardware{CpuCores: 4, CpuGhz: 2.4}
	window := 2 * time.Second
	p := &cpuwork.Params{Miner: []byte("m"), TableLog: cpuwork.MinTableLog, WindowMs: 2000, RunMs: 2000, ScaleLog: 10,
		Shape: host.Shape{Chains: 4, Steps: 1 << 20, Segment: 1 << 4}}
	stepNs := scoring.CPUCyclesPerStep / h.CpuGhz
	rate := float64(p.Chains) * 1e9 / stepNs // the server's steps per second
	credit := func(n uint64, elapsed time.Duration) float64 {
		q, err := p.Proven(n)
		if err != nil {
			t.Fatal(err)
		}
		return hostround.CPUProof{Params: q}.Credited(elapsed).CPUStepsPerSecond / rate
	}
	for _, k := range []int{1, 2, 4, 16} {
		synctest.Test(t, func(t *testing.T) {
			srv := NewCPUServer(h)
			t0 := time.Now()
			stop := t0.Add(window - miner.WindowStop)
			sums := make([]float64, k)
			var wg sync.WaitGroup
			for i := range k {
				wg.Go(func() {
					n, done := srv.HostWindow(fmt.Sprint(i))(p, stop)
					if n > 0 {
						sums[i] = credit(n, done.Sub(t0))
					}
				})
			}
			wg.Wait()
			sum := 0.0
			for _, c := range sums {
				sum += c
			}
			if bound := 1 + float64(hostround.WindowSlack(window))/float64(window); sum > bound+1e-9 || sum < 0.99 {
				t.Errorf("%d identities prove %.4f× the server, want 0.99..%.4f", k, sum, bound)
			}
			t.Logf("%d identities prove %.4f× the server", k, sum)
		})
	}
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		n, done := HostWindow(h, "", nil)(p, t0.Add(window-miner.WindowStop))
		want := float64(window-miner.WindowStop) / float64(window)
		if got := credit(n, done.Sub(t0)); math.Abs(got-want) > 1e-3 {
			t.Errorf("an honest host alone proves %.4f× its rate, want %.4f", got, want)
		}
	})
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
	for _, each := range []float64{0.6, 0.7} { // each identity's core·GHz against miner-1's 2.4
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
		if got := CPUOutsourceCheck(s); got.OK != (ratio <= MaxCPUShareGain) || !strings.Contains(got.Detail, fmt.Sprintf("ratio %.2f", ratio)) {
			t.Errorf("each %.1f: %+v", each, got)
		}
		want := (MaxCPUShareGain - 1) * c.CPUWeight * 2.4 / ref / 0.4
		if got := CPUOutsourceLeak(s, c); math.Abs(got-want) > 1e-12 {
			t.Errorf("leak %g, want %g", got, want)
		}
	}
}
