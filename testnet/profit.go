package testnet

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pog-network/pog/node"
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
// the mean consensus incentive over the summarised epochs: the one gain
// the checks and the report give for it. An adversary whose real profile
// no honest miner has cannot be judged: it is returned in unjudged
// instead. Honest miners in struck (by an injected fault) are no
// reference: an adversary is judged against unharmed honest work. The
// timeshare group's limit is shareLimit, enforced only if enforceShare.
func profitability(s *report.Summary, struck map[string]bool, shareLimit float64, enforceShare bool) (out []report.Profit, unjudged []string) {
	honest := map[string][]string{} // profile → honest miners
	groups := map[string][]report.Node{}
	for _, n := range s.Nodes {
		if n.Role != "miner" {
			continue
		}
		switch {
		case n.Adversary == "" && n.AddedLatencyMs == 0 && !n.Loaded && !struck[n.Name]:
			honest[n.Profile] = append(honest[n.Profile], n.Name)
		case n.Adversary != "":
			groups[n.Adversary] = append(groups[n.Adversary], n)
		}
	}
	for _, a := range sortedKeys(groups) {
		ms := groups[a]
		p := report.Profit{Adversary: a, RealProfile: ms[0].Profile, Honest: honest[ms[0].Profile], Limit: maxGain, Enforced: true}
		if a == "timeshare" {
			p.Limit, p.Enforced = shareLimit, enforceShare
		}
		if a == "gpu-overannounce" {
			p.Limit = overannounceLimit()
		}
		for _, n := range ms {
			p.Incentive += meanIncentive(s, n.Name)
		}
		if len(p.Honest) == 0 {
			unjudged = append(unjudged, fmt.Sprintf("%s (no honest %s)", a, p.RealProfile))
			continue
		}
		for _, h := range p.Honest {
			p.HonestIncentive += meanIncentive(s, h) / float64(len(p.Honest))
		}
		if a == "intermittent" {
			// Judged against its availability: up one round in
			// intermittentPeriod, it is owed that share of a full-time peer.
			p.HonestIncentive /= intermittentPeriod
		}
		if a == "absent" {
			p.HonestIncentive *= ms[0].Presence // owed its presence's share
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

// profitOf is adversary a's Profit, if it was judged.
func profitOf(s *report.Summary, a string) (report.Profit, bool) {
	for _, p := range s.Profitability {
		if p.Adversary == a {
			return p, true
		}
	}
	return report.Profit{}, false
}

// gainDetail quotes p's gain as every check does: the figure against its
// limit, and its baseline.
func gainDetail(p report.Profit) string {
	cmp := "≤"
	if p.Over() {
		cmp = ">"
	}
	out := fmt.Sprintf("gain %s %s limit %.2f", report.GainText(p.Gain), cmp, p.Limit)
	if !p.Enforced {
		out += " (not enforced)"
	}
	return out + fmt.Sprintf(": incentive %.4f vs %.4f owed at honest %s rates (%s)", p.Incentive, p.HonestIncentive, p.RealProfile, strings.Join(p.Honest, ", "))
}

// timeshareLimit is the largest gain k identities sharing one device may
// show when validators own a share c of every miner's slots: what the
// idle slots alone give them, (1 − (1 − c)^k)/c (SPEC.md §16), and never
// below maxTimeshareGain (issue 11's 1.1, which holds from c ≈ 0.91; the
// default 0.95 gives 1.05).
func timeshareLimit(c float64, k int) float64 {
	return max(maxTimeshareGain, (1-math.Pow(1-c, float64(k)))/c)
}

// overannounceLimit is the gain of a miner that announces more GPUs than
// it has and bursts: one step of its chain, 1/(D − 2) at the testnet's
// min_steps D, which no GPU count may shorten (SPEC.md §10.1, §16).
func overannounceLimit() float64 {
	return 1 + 1/float64(node.LocalConfig().Validator.MinSteps-2)
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

// profitCheck fails if any adversary's gain is over its enforced limit;
// unjudged ones are named in the detail.
func profitCheck(ps []report.Profit, unjudged []string) report.Check {
	ok := true
	var parts []string
	shareLimit := maxTimeshareGain
	for _, p := range ps {
		mark := ""
		switch {
		case p.Over() && !p.Enforced:
			mark = " > limit (not enforced)"
		case p.Over():
			mark = " > limit"
			ok = false
		}
		if p.Adversary == "timeshare" {
			shareLimit = p.Limit
		}
		parts = append(parts, fmt.Sprintf("%s(%s) %s%s", p.Adversary, p.RealProfile, report.GainText(p.Gain), mark))
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
