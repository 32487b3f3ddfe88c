package testnet

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pog-network/pog/testnet/report"
)

// Gain limits of the profitability check: no strategy may earn more than
// honest work on the same real hardware, beyond the noise between two
// miners' round times; a timeshare group also carries its pacing jitter.
const (
	maxGain          = 1.05
	maxTimeshareGain = 1.1
)

// noProfitGain is the gain reported when the honest reference earned
// nothing but the adversary did: any finite limit fails on it.
const noProfitGain = 1e6

// profitability compares each adversary miner identity (a sybil or
// timeshare group summed) with the honest miners of its real profile and
// no added latency (the far miner pays for its distance), by
// the mean consensus incentive over the summarised epochs. An adversary
// whose real profile no honest miner has cannot be judged: it is returned
// in unjudged instead. Honest miners in struck (by an injected fault) are
// no reference: an adversary is judged against unharmed honest work.
func profitability(s *report.Summary, struck map[string]bool) (out []report.Profit, unjudged []string) {
	mean := func(name string) float64 { return meanIncentive(s, name) }
	honest := map[string][]float64{} // profile → honest miners' incentives
	groups := map[string][]report.Node{}
	for _, n := range s.Nodes {
		if n.Role != "miner" {
			continue
		}
		switch {
		case n.Adversary == "" && n.AddedLatencyMs == 0 && !struck[n.Name]:
			honest[n.Profile] = append(honest[n.Profile], mean(n.Name))
		case n.Adversary != "":
			groups[n.Adversary] = append(groups[n.Adversary], n)
		}
	}
	for _, a := range sortedKeys(groups) {
		ms := groups[a]
		p := report.Profit{Adversary: a, RealProfile: ms[0].Profile}
		for _, n := range ms {
			p.Incentive += mean(n.Name)
		}
		hs := honest[p.RealProfile]
		if len(hs) == 0 {
			unjudged = append(unjudged, fmt.Sprintf("%s (no honest %s)", a, p.RealProfile))
			continue
		}
		for _, h := range hs {
			p.HonestIncentive += h / float64(len(hs))
		}
		if a == "intermittent" {
			// Judged against its availability: up one round in
			// intermittentPeriod, it is owed that share of a full-time peer.
			p.HonestIncentive /= intermittentPeriod
		}
		switch {
		case p.HonestIncentive > 0:
			p.Gain = p.Incentive / p.HonestIncentive
		case p.Incentive > 0:
			p.Gain = noProfitGain
		}
		out = append(out, p)
	}
	return out, unjudged
}

// timeshareLimit is the largest gain k identities sharing one device may
// show when validators own a share c of every miner's slots: what the
// idle slots alone give them, (1 − (1 − c)^k)/c (SPEC.md §16), and never
// below maxTimeshareGain (issue 11's 1.1, which holds from c ≈ 0.91; the
// default 0.95 gives 1.05).
func timeshareLimit(c float64, k int) float64 {
	return max(maxTimeshareGain, (1-math.Pow(1-c, float64(k)))/c)
}

func (r *run) profitCheck(ps []report.Profit, unjudged []string) report.Check {
	limit, enforce := r.shareLimit()
	return profitCheck(ps, unjudged, limit, enforce)
}

func (r *run) latencyChecks(s *report.Summary) []report.Check {
	limit, enforce := r.shareLimit()
	// Under the slot schedule a delayed miner is judged too: the rounds it
	// is measured in are the ones that bound time-sharing.
	tol := farTolerance
	if r.cfg.Sim {
		tol = farToleranceSim
	}
	return latencyChecks(s, r.cfg.ChainedRoundChecks || r.cfg.SlotSchedule, tol, limit, enforce)
}

// gainLimit is the largest gain adversary a may show.
func gainLimit(a string, shareLimit float64) float64 {
	if a == "timeshare" {
		return shareLimit
	}
	return maxGain
}

// profitCheck fails if any adversary earned more than its limit over
// honest work on its real hardware; unjudged ones are named in the detail.
// The timeshare group's limit is shareLimit, failed only if enforceShare.
func profitCheck(ps []report.Profit, unjudged []string, shareLimit float64, enforceShare bool) report.Check {
	ok := true
	var parts []string
	for _, p := range ps {
		bad := p.Gain > gainLimit(p.Adversary, shareLimit)
		mark := ""
		switch {
		case bad && p.Adversary == "timeshare" && !enforceShare:
			mark = " > limit (not enforced)"
			bad = false
		case bad:
			mark = " > limit"
		}
		ok = ok && !bad
		parts = append(parts, fmt.Sprintf("%s(%s) %.3f×%s", p.Adversary, p.RealProfile, p.Gain, mark))
	}
	sort.Strings(parts)
	detail := "no adversary miners"
	if len(parts) > 0 {
		detail = strings.Join(parts, ", ")
	}
	if len(unjudged) > 0 {
		detail += "; not judged: " + strings.Join(unjudged, ", ")
	}
	return report.Check{Name: fmt.Sprintf("no adversary earns more than honest work (gain ≤ %.2f, timeshare ≤ %.2f)", maxGain, shareLimit),
		OK: ok, Detail: detail}
}
