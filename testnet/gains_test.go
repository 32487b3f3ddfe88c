package testnet

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// gainFigure is a fraction quoted as a multiple ("1.061×"): only gains
// are; whole ones count things ("announced 1× H200": one GPU).
var gainFigure = regexp.MustCompile(`(\d+\.\d+)×`)

// quotedGains attributes every multiple in text to the adversary class
// named last before it on its line; a multiple after none is unattributed.
func quotedGains(text string, classes []string) (byClass map[string][]string, unattributed []string) {
	byClass = map[string][]string{}
	names := make([]*regexp.Regexp, len(classes))
	for i, c := range classes {
		names[i] = regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(c) + `([^\w-]|$)`)
	}
	for _, line := range strings.Split(text, "\n") {
		for _, m := range gainFigure.FindAllStringSubmatchIndex(line, -1) {
			class, at := "", -1
			for i, re := range names {
				for _, n := range re.FindAllStringIndex(line[:m[0]], -1) {
					if n[0] > at {
						class, at = classes[i], n[0]
					}
				}
			}
			fig := line[m[2]:m[3]] + "×"
			if class == "" {
				unattributed = append(unattributed, fig+" in "+line)
				continue
			}
			byClass[class] = append(byClass[class], fig)
		}
	}
	return byClass, unattributed
}

// gainContradictions are the multiples in text that are not the Profit
// gain of the adversary they follow, and the judged adversaries text never
// quotes.
func gainContradictions(where, text string, s *report.Summary) []string {
	var classes []string
	for _, n := range s.Nodes {
		if n.Adversary != "" && !slices.Contains(classes, n.Adversary) {
			classes = append(classes, n.Adversary)
		}
	}
	got, stray := quotedGains(text, classes)
	var out []string
	for _, f := range stray {
		out = append(out, fmt.Sprintf("%s: a multiple of no adversary: %s", where, f))
	}
	for _, a := range classes {
		p, judged := adversary.ProfitOf(s, a)
		want := report.GainText(p.Gain)
		if judged && len(got[a]) == 0 {
			out = append(out, fmt.Sprintf("%s never quotes %s's gain %s", where, a, want))
		}
		for _, g := range got[a] {
			if !judged || g != want {
				out = append(out, fmt.Sprintf("%s quotes %s's gain as %s; its adversary.Profitability gain is %s (judged: %v)", where, a, g, want, judged))
			}
		}
	}
	return out
}

// checkText is the checks as the report's rows show them.
func checkText(s *report.Summary) string {
	var out []string
	for _, c := range s.Checks {
		out = append(out, c.Name+" | "+c.Detail)
	}
	return strings.Join(out, "\n")
}

// gainSummary is a run of three honest miners and burst, intermittent,
// sybil, timeshare and lazy, whose gains all differ, with burst's over its
// limit; its profitability and checks are computed as a run computes them.
func gainSummary(t *testing.T) (*run, *report.Summary) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Adversaries = []string{"burst", "intermittent", "sybil", "timeshare", "lazy"}
	r := &run{cfg: cfg}
	miner := func(name, profile, adversary string, sim float64) report.Node {
		return report.Node{Name: name, Role: "miner", Profile: profile, Adversary: adversary, SimTFLOPS: sim,
			ProfileTFLOPS: machine.ByName(profile).FP16TFLOPS}
	}
	s := &report.Summary{Validators: 1, Nodes: []report.Node{
		{Name: "validator-1", Role: "validator"},
		miner("miner-1", "H200", "", 2e-4), miner("miner-2", "H100", "", 1e-4), miner("miner-3", "RTX4090", "", 5e-5),
		miner("burst", "H100", "burst", 1e-4), miner("intermittent", "H100", "intermittent", 1e-4),
		miner("sybil-a", "RTX4090", "sybil", 5e-5), miner("sybil-b", "RTX4090", "sybil", 5e-5),
		miner("timeshare-1", "H200", "timeshare", 2e-4), miner("timeshare-2", "H200", "timeshare", 2e-4),
		miner("lazy", "H100", "lazy", 1e-4),
	}}
	inc := map[string]float64{"miner-1": 0.3, "miner-2": 0.2, "miner-3": 0.05, "burst": 0.2122, "intermittent": 0.0183,
		"sybil-a": 0.02, "sybil-b": 0.029, "timeshare-1": 0.16, "timeshare-2": 0.15}
	for e := uint64(5); e <= 6; e++ {
		s.Epochs = append(s.Epochs, report.Epoch{Epoch: e, Incentive: inc, Consensus: inc, Trust: map[string]float64{"validator-1": 1},
			Identical: true})
		for _, n := range s.Nodes[1:] {
			s.Rounds = append(s.Rounds, report.Round{Epoch: e, Miner: n.Name, Verified: n.Name != "lazy", TFLOPS: n.SimTFLOPS})
		}
	}
	s.Detections = []report.Detection{{Adversary: "lazy", Node: "lazy", Epoch: 5, Kind: "flag", Detail: "announced 1× H100, measured 0 TFLOPS"}}
	s.Throughput, s.TimeSharing = r.figures(s, 5, 6)
	limit, enforce := r.shareLimit()
	var unjudged []string
	s.Profitability, unjudged = adversary.Profitability(s, nil, limit, enforce)
	s.JudgedByPay = adversary.JudgedByPay(cfg.Adversaries)
	s.Checks = append(r.checks(s, 5, nil, nil, unjudged), r.latencyChecks(s)...)
	return r, s
}

// Every gain the checks and the report quote for an adversary is its one
// profitability gain, against one baseline; an adversary over its limit
// fails each check that quotes it.
func TestOneGainPerAdversary(t *testing.T) {
	_, s := gainSummary(t)
	for _, c := range s.Checks {
		if strings.Contains(c.Detail, "gain 1.061× > limit") && c.OK {
			t.Errorf("check %q passes with burst over its limit: %s", c.Name, c.Detail)
		}
	}
	for _, e := range gainContradictions("the checks", checkText(s), s) {
		t.Error(e)
	}
	dir := t.TempDir()
	if _, err := report.Write(dir, s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.MarkdownFile, report.HTMLFile} {
		doc, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range gainContradictions(f, string(doc), s) {
			t.Error(e)
		}
	}
}

// The check above catches what the report once showed: burst failing
// profitability at one gain and quoting another, last epoch's against one
// honest miner, in its own row.
func TestOneGainPerAdversaryCatchesASecondFigure(t *testing.T) {
	_, s := gainSummary(t)
	s.Checks = append(s.Checks, report.Check{Name: "adversary burst gains at most 5%", OK: true,
		Detail: "incentive 0.2122 vs 0.1659 of honest miner-2 (1.279×)"})
	got := gainContradictions("the checks", checkText(s), s)
	if len(got) != 1 || !strings.Contains(got[0], "burst's gain as 1.279×; its adversary.Profitability gain is 1.061×") {
		t.Errorf("contradictions %q", got)
	}
}
