package report

import (
	"math"
	"strings"
	"testing"
)

func TestEng(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 2.1e-4: "210e-6", 0.000213456: "213e-6", 1.57: "1.57", 15.7: "15.7", 157: "157", 4560: "4.56e3",
		9.996e-4: "1.00e-3", -0.0025: "-2.50e-3", 6.1: "6.10", math.NaN(): dash, math.Inf(1): dash,
	} {
		if got := eng(v); got != want {
			t.Errorf("eng(%v) = %q, want %q", v, got, want)
		}
	}
}

// The report leads with checks and plots under a table of contents, shows
// TFLOPS in engineering notation with the scale, epochs with wall time, and
// detections per adversary per epoch with the full list folded.
func TestReportLayout(t *testing.T) {
	s := sample()
	dir := t.TempDir()
	if _, err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	doc := read(t, dir, MarkdownFile)
	html := read(t, dir, HTMLFile)
	order := func(doc, name string, parts ...string) {
		t.Helper()
		at := -1
		for _, p := range parts {
			i := strings.Index(doc, p)
			if i < 0 {
				t.Errorf("%s lacks %q", name, p)
				return
			}
			if i < at {
				t.Errorf("%s: %q comes too late", name, p)
			}
			at = i
		}
	}
	order(doc, "report.md", "- [Checks](#checks)", "- [Run](#run)", "## Checks", "## Plots", "![", "## Profitability",
		"## Nodes", "## Epochs", "## Detections", "<details>", "| adversary | node | epoch |", "</details>", "## Run")
	order(html, "report.html", `<a href="#checks">`, `<h2 id="checks">`, `<h2 id="plots">`, "<img", `<h2 id="profitability">`,
		`<h2 id="nodes">`, `<h2 id="epochs">`, `<h2 id="detections">`, "<details><summary>All 6 detections</summary>", `<h2 id="run">`)
	for _, want := range []string{
		"× 10.0e-3", // the scale, stated
		"| miner-4 | miner | RTX4090 | honest | 157.0 | 1.57 |",
		"| 1 | 58000000 | 21:20:00–21:20:30 UTC (10.0 to 40.0 s into the run) | 20 | 4 | 3 | ✓ yes |",
		"| lazy | miner-5 | 3 | 12.5 | 58000000 | 1 failed-round, 1 flag | 1 clipped | — |",
		"| tamper | " + md(evilName) + " | 3 | 14.0 | 58000000 | 1 failed-round | 1 peer-score | 1 audit |",
		"| tamper | H100 | " + md(evilName) + " | 0.0000 | 0.3036 | miner-2 | 0.000× | 1.05 | ✓ within |",
		"| lazy | CPU | miner-5 | — | — | — | — | — | not judged: no honest miner of its real profile |",
		// Earnings in the Nodes table: miner-1's 0.125 of 0.343 each epoch,
		// after its 12 verified rounds and none failed.
		" | 12 | 0 | " + num(0.125/0.343, 4) + " | 12D3KooWm1 |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// measured ÷ scale: miner-1's measured median over 0.01.
	if m := measuredTFLOPS(s)["miner-1"]; !strings.Contains(doc, " | "+eng(m)+" | "+num(m/0.01, 1)+" | ") {
		t.Errorf("report.md lacks miner-1's measured %s and its unscaled %s", eng(m), num(m/0.01, 1))
	}
}

// An adversary the run judges by pay is shown as not detected by design,
// not as missed; one meant to be caught and never detected is a failure.
func TestNotDetectedByDesign(t *testing.T) {
	s := sample()
	s.Nodes = append(s.Nodes, Node{Name: "burst", Role: "miner", Profile: "H100", Adversary: "burst"},
		Node{Name: "sybil-a", Role: "miner", Profile: "RTX4090", Adversary: "sybil"})
	s.JudgedByPay = []string{"burst"}
	rows := map[string]row{}
	for _, r := range detectionSummary(s, nodeByName(s)).Rows {
		rows[r.Cells[0]] = r
	}
	if r := rows["burst"]; r.Class != "" || !strings.HasPrefix(r.Cells[3], "not detected (by design") {
		t.Errorf("burst, judged by pay: %+v", r)
	}
	if r := rows["sybil"]; r.Class != "fail" || r.Cells[3] != "not detected" {
		t.Errorf("sybil, never detected: %+v", r)
	}
}

// A gain over its enforced limit marks its row failed, over a limit not
// enforced marks it a warning; the baseline's miners are named.
func TestProfitTable(t *testing.T) {
	s := &Summary{Profitability: []Profit{
		{Adversary: "burst", RealProfile: "H100", Incentive: 0.2122, HonestIncentive: 0.2, Honest: []string{"miner-2", "miner-8"}, Gain: 1.061, Limit: 1.05, Enforced: true},
		{Adversary: "timeshare", RealProfile: "H200", Gain: 1.3, Limit: 1.1},
		{Adversary: "sybil", RealProfile: "RTX4090", Gain: 0.98, Limit: 1.05, Enforced: true},
	}}
	want := map[string][2]string{"burst": {"fail", "✗ over the limit"}, "timeshare": {"warn", "over the limit (not enforced)"}, "sybil": {"", "✓ within"}}
	tb := profitTable(s)
	for _, r := range tb.Rows {
		if w := want[r.Cells[0]]; r.Class != w[0] || r.Cells[len(r.Cells)-1] != w[1] {
			t.Errorf("row %v (class %q), want %v", r.Cells, r.Class, w)
		}
	}
	if r := tb.Rows[0]; strings.Join(r.Cells[3:8], " ") != "0.2122 0.2000 miner-2, miner-8 1.061× 1.05" {
		t.Errorf("burst's figures: %v", r.Cells)
	}
}
