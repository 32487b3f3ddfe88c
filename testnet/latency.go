package testnet

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// FarDelay is what the far miner adds to every message, each way: a
// validator on another continent.
const FarDelay = 200 * time.Millisecond

// maxDelay bounds an added latency: beyond it rounds miss their deadline
// whatever the protocol.
const maxDelay = 5 * time.Second

// The distance bound, enforced under the slot schedule or with
// Config.ChainedRoundChecks: a delayed miner's throughput against its
// undelayed twin's, within 1 % in virtual time, and 3 % in real time
// (the loaded machine's timer and scheduling noise).
const farTolerance, farToleranceSim = 0.03, 0.01

// delayFor is the latency added to miner name of profile: Delays by name,
// FarDelay for the far miner, then Delays by profile.
func (r *run) delayFor(name, profile string) time.Duration {
	if d, ok := r.cfg.Delays[name]; ok {
		return d
	}
	if name == "far" {
		return FarDelay
	}
	return r.cfg.Delays[profile]
}

// checkDelays refuses a Delays key that names no miner of the run and no
// profile: a typo would silently leave the miner undelayed.
func (r *run) checkDelays() error {
	known := map[string]bool{}
	for _, p := range machine.Profiles {
		known[p.Name] = true
	}
	for _, s := range r.minerSpecs() {
		known[s.name] = true
	}
	for _, k := range sortedKeys(r.cfg.Delays) {
		if !known[k] {
			return fmt.Errorf("testnet: delay for %q: no such miner or profile in this run", k)
		}
	}
	return nil
}

// ParseDelays reads "NAME=DURATION,…" (e.g. "miner-2=50ms,H100=200ms"):
// a miner's name or a profile, and the latency to add each way.
func ParseDelays(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("delay %q: want NAME=DURATION", kv)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("delay %q: %w", kv, err)
		}
		if d < 0 || d > maxDelay {
			return nil, fmt.Errorf("delay %q: want 0..%v", kv, maxDelay)
		}
		out[name] = d
	}
	return out, nil
}

// figures measures, from the full epochs [from, to], every miner's
// throughput against its simulated device's and what each group sharing
// one device measures against an honest miner of its profile.
func (r *run) figures(s *report.Summary, from, to uint64) ([]report.Throughput, []report.TimeShare) {
	tflops := map[string][]float64{}
	for _, rd := range s.Rounds {
		if rd.Verified && rd.Epoch >= from && rd.Epoch <= to {
			tflops[rd.Miner] = append(tflops[rd.Miner], rd.TFLOPS)
		}
	}
	// An honest miner's penalties are its false positives; Detections
	// name adversaries (and, for an equivocator, the node holding the
	// proof), never an honest miner's fault.
	penalties := map[string]int{}
	for _, d := range s.FalsePositives {
		penalties[d.Node]++
	}
	var out []report.Throughput
	ref := map[string]*report.Throughput{} // profile → first undelayed honest miner
	for _, n := range s.Nodes {
		if n.Role != "miner" || n.Adversary != "" {
			continue
		}
		t := report.Throughput{Node: n.Name, Profile: n.Profile, AddedLatencyMs: n.AddedLatencyMs, SimTFLOPS: n.SimTFLOPS,
			MeasuredTFLOPS: median(tflops[n.Name]), Rounds: len(tflops[n.Name]), Incentive: adversary.MeanIncentive(s, n.Name), Penalties: penalties[n.Name]}
		t.Ratio = t.MeasuredTFLOPS / t.SimTFLOPS
		out = append(out, t)
	}
	for i := range out {
		if t := &out[i]; t.AddedLatencyMs == 0 && ref[t.Profile] == nil {
			ref[t.Profile] = t
		}
	}
	for i := range out {
		if t, p := &out[i], ref[out[i].Profile]; p != nil && p != t && p.MeasuredTFLOPS > 0 {
			t.Reference, t.Relative = p.Node, t.MeasuredTFLOPS/p.MeasuredTFLOPS
		}
	}
	var g *report.TimeShare
	sum := 0.0
	for _, n := range s.Nodes {
		if n.Adversary != "timeshare" {
			continue
		}
		if g == nil {
			g = &report.TimeShare{Adversary: n.Adversary, Profile: n.Profile, RoundInterval: r.nodeConfig().Validator.RoundInterval.String(),
				DutyCycle: r.dutyCycle(s.Validators)}
		}
		g.Members = append(g.Members, n.Name)
		sum += median(tflops[n.Name])
	}
	if g == nil {
		return out, nil
	}
	if p := ref[g.Profile]; p != nil {
		g.Reference = p.Node
		if p.MeasuredTFLOPS > 0 {
			g.ThroughputRatio = sum / p.MeasuredTFLOPS
		}
	}
	return out, []report.TimeShare{*g}
}

// dutyCycle is the share of one miner's time under the validators'
// rounds as configured: with the slot schedule validator.duty_cycle
// itself (SPEC.md §16); else each validator keeps a miner under its
// rounds a fraction validator.duty_cycle of the time, so together at most
// validators × that, and never more than all of it.
func (r *run) dutyCycle(validators int) float64 {
	if r.cfg.SlotSchedule {
		return r.nodeConfig().Validator.DutyCycle
	}
	return min(1, float64(validators)*r.nodeConfig().Validator.DutyCycle)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// shareLimit is the timeshare group's gain limit, and whether it is
// enforced: with the slot schedule its bound at the run's coverage,
// always; else 1.1×, with the chained-round checks only.
func (r *run) shareLimit() (float64, bool) {
	if r.cfg.SlotSchedule {
		return adversary.TimeshareLimit(r.nodeConfig().Validator.DutyCycle, adversary.TimeshareIdentities), true
	}
	return adversary.MaxTimeshareGain, r.cfg.ChainedRoundChecks
}

// latencyChecks are the bounds on distance and time-sharing (SPEC §10.1). Not
// enforced, they pass and say what they measured: far miners still
// measure short, and random pauses do not bound time-sharing. A
// time-sharing group is judged by its one gain, its Profit, against that
// Profit's limit where enforced.
func latencyChecks(s *report.Summary, enforce bool, farTol float64) []report.Check {
	var out []report.Check
	add := func(name string, ok bool, detail string, enforce bool) {
		if !enforce {
			ok, detail = true, "not enforced (random pauses, ChainedRoundChecks off): "+detail
		}
		out = append(out, report.Check{Name: name, OK: ok, Detail: detail})
	}
	var far []string
	farOK, anyFar := true, false
	for _, t := range s.Throughput {
		if t.AddedLatencyMs == 0 {
			continue
		}
		anyFar = true
		ok := t.Reference != "" && math.Abs(t.Relative-1) <= farTol && t.Penalties == 0
		farOK = farOK && ok
		far = append(far, fmt.Sprintf("%s(+%.0f ms) %.4f TFLOPS = %.1f %% of %s, %d penalties",
			t.Node, t.AddedLatencyMs, t.MeasuredTFLOPS, 100*t.Relative, orDash(t.Reference), t.Penalties))
	}
	if anyFar {
		add(fmt.Sprintf("delayed miners measure within %.0f %% of their profile, never penalised", 100*farTol), farOK, strings.Join(far, "; "), enforce)
	}
	for _, g := range s.TimeSharing {
		p, ok := adversary.ProfitOf(s, g.Adversary)
		detail := fmt.Sprintf("%d identities' throughput over %s's: %.2f, at duty cycle %.1f %% (round interval %s)",
			len(g.Members), orDash(g.Reference), g.ThroughputRatio, 100*g.DutyCycle, g.RoundInterval)
		if !ok {
			add("adversary "+g.Adversary+" earns no more than honest work", true, "not judged: no honest "+g.Profile+"; "+detail, true)
			continue
		}
		add("adversary "+g.Adversary+" earns no more than honest work (not meant to be detected)", !p.Over(), adversary.GainDetail(p)+"; "+detail, p.Enforced)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "no reference"
	}
	return s
}

func (r *run) latencyChecks(s *report.Summary) []report.Check {
	// Under the slot schedule a delayed miner is judged too: the rounds it
	// is measured in are the ones that bound time-sharing.
	tol := farTolerance
	if r.cfg.Sim {
		tol = farToleranceSim
	}
	return latencyChecks(s, r.cfg.ChainedRoundChecks || r.cfg.SlotSchedule, tol)
}
