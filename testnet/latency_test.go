package testnet

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

func TestParseDelays(t *testing.T) {
	d, err := ParseDelays("miner-2=50ms,H100=200ms")
	if err != nil || d["miner-2"] != 50*time.Millisecond || d["H100"] != 200*time.Millisecond || len(d) != 2 {
		t.Fatalf("got %v, %v", d, err)
	}
	for _, bad := range []string{"miner-2", "=5ms", "far=soon", "far=-1ms", "far=1h"} {
		if _, err := ParseDelays(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDelayFor(t *testing.T) {
	r := &run{cfg: Config{Delays: map[string]time.Duration{"miner-2": 50 * time.Millisecond, "H100": 10 * time.Millisecond}}}
	for _, c := range []struct {
		name, profile string
		want          time.Duration
	}{
		{"miner-2", "H100", 50 * time.Millisecond}, // name wins over profile
		{"miner-3", "H100", 10 * time.Millisecond},
		{"miner-1", "H200", 0},
		{"far", "H100", FarDelay}, // far's own default wins over its profile's
	} {
		if got := r.delayFor(c.name, c.profile); got != c.want {
			t.Errorf("delayFor(%s, %s) = %v, want %v", c.name, c.profile, got, c.want)
		}
	}
	r.cfg.Delays["far"] = 0
	if got := r.delayFor("far", "H100"); got != 0 {
		t.Errorf("far=0 gave %v", got)
	}
}

// figureSummary is a run with an honest H200, a far one at 60 % of its
// speed and penalised once, and three timeshare identities.
func figureSummary() *report.Summary {
	s := &report.Summary{Validators: 2, Nodes: []report.Node{
		{Name: "miner-1", Role: "miner", Profile: "H200", SimTFLOPS: 2e-4},
		{Name: "far", Role: "miner", Profile: "H200", SimTFLOPS: 2e-4, AddedLatencyMs: 200},
		{Name: "timeshare-1", Role: "miner", Profile: "H200", SimTFLOPS: 2e-4, Adversary: "timeshare"},
		{Name: "timeshare-2", Role: "miner", Profile: "H200", SimTFLOPS: 2e-4, Adversary: "timeshare"},
		{Name: "timeshare-3", Role: "miner", Profile: "H200", SimTFLOPS: 2e-4, Adversary: "timeshare"},
	}}
	for _, rd := range []report.Round{
		{Epoch: 5, Miner: "miner-1", Verified: true, TFLOPS: 1.0e-4},
		{Epoch: 5, Miner: "miner-1", Verified: true, TFLOPS: 1.8e-4},
		{Epoch: 5, Miner: "miner-1", Verified: true, TFLOPS: 2.0e-4}, // median 1.8e-4
		{Epoch: 4, Miner: "miner-1", Verified: true, TFLOPS: 9},      // partial epoch: ignored
		{Epoch: 5, Miner: "miner-1", Verified: false, TFLOPS: 0},     // failed: ignored
		{Epoch: 5, Miner: "far", Verified: true, TFLOPS: 1.0e-4},
		{Epoch: 6, Miner: "far", Verified: true, TFLOPS: 1.16e-4}, // median 1.08e-4: 60 % of miner-1
		{Epoch: 5, Miner: "timeshare-1", Verified: true, TFLOPS: 1.8e-4},
		{Epoch: 5, Miner: "timeshare-2", Verified: true, TFLOPS: 0.9e-4},
		{Epoch: 5, Miner: "timeshare-3", Verified: true, TFLOPS: 0.6e-4}, // together 1.83× miner-1
	} {
		s.Rounds = append(s.Rounds, rd)
	}
	s.Epochs = []report.Epoch{
		{Epoch: 5, Incentive: map[string]float64{"miner-1": 0.2, "far": 0.1, "timeshare-1": 0.2, "timeshare-2": 0.1, "timeshare-3": 0.05}},
		{Epoch: 6, Incentive: map[string]float64{"miner-1": 0.2, "far": 0.1, "timeshare-1": 0.2, "timeshare-2": 0.1, "timeshare-3": 0.05}},
	}
	s.FalsePositives = []report.Detection{{Node: "far", Kind: "flag"}}
	return s
}

func TestFigures(t *testing.T) {
	r := &run{cfg: DefaultConfig()}
	r.cfg.SlotSchedule = false // validators pause at random: duty cycles add up
	s := figureSummary()
	tp, gains := r.figures(s, 5, 6)
	if len(tp) != 2 {
		t.Fatalf("throughput of %d miners, want the 2 honest ones: %+v", len(tp), tp)
	}
	m1, far := tp[0], tp[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }
	if m1.Node != "miner-1" || !near(m1.MeasuredTFLOPS, 1.8e-4) || m1.Rounds != 3 || !near(m1.Ratio, 0.9) || m1.Reference != "" {
		t.Errorf("miner-1: %+v", m1)
	}
	if far.Reference != "miner-1" || !near(far.Relative, 0.6) || far.Penalties != 1 || !near(far.Incentive, 0.1) {
		t.Errorf("far: %+v", far)
	}
	if len(gains) != 1 {
		t.Fatalf("gains %+v", gains)
	}
	g := gains[0]
	if len(g.Members) != 3 || g.Reference != "miner-1" || !near(g.ThroughputRatio, 3.3e-4/1.8e-4) {
		t.Errorf("timeshare: %+v", g)
	}
	// 2 validators × the testnet's duty_cycle.
	if want := 2 * r.nodeConfig().Validator.DutyCycle; !near(g.DutyCycle, want) || g.RoundInterval != r.nodeConfig().Validator.RoundInterval.String() {
		t.Errorf("duty cycle %v at %s, want %v", g.DutyCycle, g.RoundInterval, want)
	}
}

// TestLatencyChecks: off, the bounds pass and report; on, they judge. The
// time-sharing group is judged by its Profit: its one gain, against that
// Profit's limit where enforced.
func TestLatencyChecks(t *testing.T) {
	r := &run{cfg: DefaultConfig()}
	s := figureSummary()
	s.Throughput, s.TimeSharing = r.figures(s, 5, 6)
	// Summed 0.35 against miner-1's 0.2.
	s.Profitability, _ = adversary.Profitability(s, nil, adversary.MaxTimeshareGain, false)
	for _, c := range latencyChecks(s, false, farTolerance) {
		if !c.OK || !strings.HasPrefix(c.Detail, "not enforced") {
			t.Errorf("unenforced check %q: ok=%v %s", c.Name, c.OK, c.Detail)
		}
	}
	s.Profitability, _ = adversary.Profitability(s, nil, adversary.MaxTimeshareGain, true)
	c := latencyChecks(s, false, farTolerance)
	if !c[0].OK || c[1].OK || !strings.Contains(c[1].Detail, "gain 1.750× > limit 1.10") {
		t.Errorf("distance off, a 1.75× timeshare against an enforced 1.1: %+v", c)
	}
	s.Profitability, _ = adversary.Profitability(s, nil, 1.8, true)
	if c := latencyChecks(s, false, farTolerance); !c[1].OK {
		t.Errorf("a 1.75× timeshare failed a 1.8 limit: %+v", c[1])
	}
	s.Profitability, _ = adversary.Profitability(s, nil, adversary.MaxTimeshareGain, true)
	on := latencyChecks(s, true, farTolerance)
	if len(on) != 2 || on[0].OK || on[1].OK {
		t.Fatalf("enforced checks on a far miner at 60 %% and a 1.75× timeshare: %+v", on)
	}
	// Within the bounds: far at 98 % and unpenalised, timeshare at 1.05×.
	s.Throughput[1].Relative, s.Throughput[1].Penalties = 0.98, 0
	s.Profitability[0].Gain = 1.05
	for _, c := range latencyChecks(s, true, farTolerance) {
		if !c.OK {
			t.Errorf("check %q failed within the bounds: %s", c.Name, c.Detail)
		}
	}
	// A far miner without an undelayed reference cannot pass.
	s.Throughput[1].Reference = ""
	if c := latencyChecks(s, true, farTolerance); c[0].OK {
		t.Error("far check passed without a reference miner")
	}
}

func TestCheckDelays(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Miners, cfg.Adversaries = 2, []string{"far"}
	for _, c := range []struct {
		key string
		ok  bool
	}{{"miner-2", true}, {"far", true}, {"A100", true}, {"miner-3", false}, {"validator-1", false}, {"h100", false}} {
		cfg.Delays = map[string]time.Duration{c.key: time.Millisecond}
		r := &run{cfg: cfg}
		if err := r.checkDelays(); (err == nil) != c.ok {
			t.Errorf("delay for %q: err %v, want ok=%v", c.key, err, c.ok)
		}
	}
}
