package adversary

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/testnet/report"
)

// Gain limits of the profitability check: no strategy may earn more than
// honest work on the same real hardware, beyond the noise between two
// miners' round times; a timeshare group also carries its pacing jitter.
const (
	MaxGain          = 1.05
	MaxTimeshareGain = 1.1
)

// noProfitGain is the gain reported when the honest reference earned
// nothing but the adversary did: any finite limit fails on it.
const noProfitGain = 1e6

// Profitability compares each adversary miner identity (a sybil or
// timeshare group summed) with the honest miners of its real profile and
// no added latency (the far miner pays for its distance), by
// the mean consensus incentive over the summarised epochs: the one gain
// the checks and the report give for it. An adversary whose real profile
// no honest miner has cannot be judged: it is returned in unjudged
// instead. Honest miners in struck (by an injected fault) are no
// reference: an adversary is judged against unharmed honest work. The
// timeshare group's limit is shareLimit, enforced only if enforceShare.
func Profitability(s *report.Summary, struck map[string]bool, shareLimit float64, enforceShare bool) (out []report.Profit, unjudged []string) {
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
	for _, a := range slices.Sorted(maps.Keys(groups)) {
		ms := groups[a]
		p := report.Profit{Adversary: a, RealProfile: ms[0].Profile, Honest: honest[ms[0].Profile], Limit: MaxGain, Enforced: true}
		if a == "timeshare" || a == "cpu-outsource" || a == "ram-rebuild" { // identities sharing one device
			p.Limit, p.Enforced = shareLimit, enforceShare
		}
		if a == "gpu-overannounce" {
			p.Limit = OverannounceLimit()
		}
		if a == "accomplice" { // the dishonest validator's: reported, SPEC.md §20
			p.Limit, p.Enforced = AccompliceLimit(HonestValidators(s)), false
		}
		for _, n := range ms {
			p.Incentive += MeanIncentive(s, n.Name)
		}
		if len(p.Honest) == 0 {
			unjudged = append(unjudged, fmt.Sprintf("%s (no honest %s)", a, p.RealProfile))
			continue
		}
		for _, h := range p.Honest {
			p.HonestIncentive += MeanIncentive(s, h) / float64(len(p.Honest))
		}
		if a == "intermittent" {
			// Judged against its availability: up one round in
			// IntermittentPeriod, it is owed that share of a full-time peer.
			p.HonestIncentive /= IntermittentPeriod
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

// HonestValidators counts the validators that play no adversary.
func HonestValidators(s *report.Summary) int {
	n := 0
	for _, v := range s.Nodes {
		if v.Role == "validator" && v.Adversary == "" {
			n++
		}
	}
	return n
}

// ProfitOf is adversary a's Profit, if it was judged.
func ProfitOf(s *report.Summary, a string) (report.Profit, bool) {
	for _, p := range s.Profitability {
		if p.Adversary == a {
			return p, true
		}
	}
	return report.Profit{}, false
}

// GainDetail quotes p's gain as every check does: the figure against its
// limit, and its baseline.
func GainDetail(p report.Profit) string {
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

// TimeshareLimit is the largest gain k identities sharing one device may
// show when validators own a share c of every miner's slots: what the
// idle slots alone give them, (1 − (1 − c)^k)/c (SPEC.md §16), and never
// below MaxTimeshareGain (1.1, which holds from c ≈ 0.91; the default
// 0.95 gives 1.05).
func TimeshareLimit(c float64, k int) float64 {
	return max(MaxTimeshareGain, (1-math.Pow(1-c, float64(k)))/c)
}

// OverannounceLimit is the gain of a miner that announces more GPUs than
// it has and bursts: one step of its chain, 1/(D − 2) at the testnet's
// min_steps D, which no GPU count may shorten (SPEC.md §10.1, §16).
func OverannounceLimit() float64 {
	return 1 + 1/float64(config.LocalConfig().Validator.MinSteps-2)
}

// ProfitCheck fails if any adversary's gain is over its enforced limit;
// unjudged ones are named in the detail.
func ProfitCheck(ps []report.Profit, unjudged []string) report.Check {
	ok := true
	var parts []string
	shareLimit := MaxTimeshareGain
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
	return report.Check{Name: fmt.Sprintf("no adversary earns more than honest work (gain ≤ %.2f, timeshare ≤ %.2f)", MaxGain, shareLimit),
		OK: ok, Detail: detail}
}

// ByPay are the adversary classes not meant to be detected: burst and
// distant compute at their real speed, so their measured throughput bounds
// them; the others are paid only for what they prove; timeshare cheats
// without a detectable fault. What each earns, its Profit, judges it.
var ByPay = []string{"absent", "burst", "distant", "intermittent", "host-overclaim", "cpu-on-gpu", "ram-on-disk", "storage-regen", "sparse-plot", "timeshare",
	"memory-inflate", "gpu-overannounce", "ram-rebuild"}

// JudgedByPay are the classes of advs in ByPay, in advs' order.
func JudgedByPay(advs []string) []string {
	var out []string
	for _, a := range advs {
		if slices.Contains(ByPay, a) {
			out = append(out, a)
		}
	}
	return out
}

// PaidCheck judges adversary a by its Profit, quoted as the profitability
// check quotes it; a timing adversary (burst, distant) must besides
// measure at most 1.05× its true throughput (SPEC.md §10.1).
func PaidCheck(a string, s *report.Summary) report.Check {
	timing := a == "burst" || a == "distant" || a == "gpu-overannounce"
	name := "adversary " + a + " earns no more than honest work"
	if timing {
		name = "adversary " + a + " measures at most 5 % over its true throughput and earns no more than honest work"
	}
	ok, detail := true, "gain not judged: no honest miner of its real profile"
	if p, judged := ProfitOf(s, a); judged {
		ok, detail = !p.Over(), GainDetail(p)
	}
	if timing {
		tok, tdetail := throughputBound(a, s)
		ok, detail = ok && tok, tdetail+"; "+detail
	}
	return report.Check{Name: name + " (not meant to be detected)", OK: ok, Detail: detail}
}

// throughputBound says whether miner a's median measured throughput is at
// most 1.05× the speed its device computes at.
func throughputBound(a string, s *report.Summary) (bool, string) {
	var sim float64
	for _, n := range s.Nodes {
		if n.Name == a {
			sim = n.SimTFLOPS
		}
	}
	var measured []float64
	for _, rd := range s.Rounds {
		if rd.Miner == a && rd.Verified {
			measured = append(measured, rd.TFLOPS)
		}
	}
	if len(measured) == 0 || sim <= 0 {
		return false, "no verified round"
	}
	sort.Float64s(measured)
	ratio := measured[len(measured)/2] / sim
	return ratio <= 1.05, fmt.Sprintf("median measured/true throughput %.3f over %d rounds", ratio, len(measured))
}

// MeanIncentive is a node's consensus incentive averaged over the
// summarised epochs.
func MeanIncentive(s *report.Summary, name string) float64 {
	sum := 0.0
	for _, e := range s.Epochs {
		sum += e.Incentive[name]
	}
	return sum / float64(max(1, len(s.Epochs)))
}
