package report

import (
	"maps"
	"slices"
	"strings"
)

// profitNote states the one baseline every gain in the report is against.
const profitNote = "Gain is an adversary's mean consensus incentive over the summarised epochs (a sybil, timeshare or cpu-outsource group's summed) " +
	"÷ the baseline: the mean of the same over the honest miners listed, the undelayed ones of its real hardware that no fault struck " +
	"(intermittent is owed a tenth of it, being up one round in ten). It is the only gain this report and its checks give."

// profitTable is one row per adversary class with its gain against its
// limit; a row over an enforced limit is marked "fail", one over a limit
// not enforced "warn". Classes of miners with no Profit are not judged.
func profitTable(s *Summary) table {
	t := table{Head: []string{"adversary", "real profile", "nodes", "mean incentive", "baseline", "honest miners", "gain", "limit", "verdict"}}
	judged := map[string]bool{}
	for _, p := range s.Profitability {
		judged[p.Adversary] = true
		verdict, class := "✓ within", ""
		switch {
		case p.Over() && p.Enforced:
			verdict, class = "✗ over the limit", "fail"
		case p.Over():
			verdict, class = "over the limit (not enforced)", "warn"
		case !p.Enforced:
			verdict = "✓ within (not enforced)"
		}
		t.add(class, p.Adversary, orDash(p.RealProfile), members(s, p.Adversary), num(p.Incentive, 4), num(p.HonestIncentive, 4),
			orDash(strings.Join(p.Honest, ", ")), GainText(p.Gain), num(p.Limit, 2), verdict)
	}
	unjudged := map[string]string{} // class → real profile
	for _, n := range s.Nodes {
		if n.Role == "miner" && n.Adversary != "" && !judged[n.Adversary] {
			judged[n.Adversary] = true
			unjudged[n.Adversary] = n.Profile
		}
	}
	for _, a := range sortedKeys(unjudged) {
		t.add("", a, orDash(unjudged[a]), members(s, a), dash, dash, dash, dash, dash, "not judged: no honest miner of its real profile")
	}
	return t
}

// members are the names of the nodes of adversary class a.
func members(s *Summary, a string) string {
	var out []string
	for _, n := range s.Nodes {
		if n.Adversary == a {
			out = append(out, n.Name)
		}
	}
	return orDash(strings.Join(out, ", "))
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
