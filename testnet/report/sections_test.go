package report

import (
	"encoding/json"
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
		"| 58000000 | 21:20:00–21:20:30 UTC (10.0 to 40.0 s into the run) | 20 | 4 | 3 | ✓ yes |",
		"| lazy | miner-5 | 3 | 12.5 | 58000000 | 1 failed-round, 1 flag | 1 clipped | — |",
		"| tamper | " + md(evilName) + " | 3 | 14.0 | 58000000 | 1 failed-round | 1 peer-score | 1 audit |",
		"This run's summary has no profitability figures.",
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

func TestProfitabilityTable(t *testing.T) {
	if _, ok := profitabilityTable([]byte(`{"seed": 1}`)); ok {
		t.Error("a summary without profitability has a table")
	}
	if _, ok := profitabilityTable([]byte(`{"profitability": "n/a"}`)); ok {
		t.Error("a non-array profitability has a table")
	}
	tb, ok := profitabilityTable([]byte(`{"profitability": [
		{"miner": "miner-1", "usd_per_gpu_hour": 2.3456789, "profitable": true},
		{"miner": "miner-2", "usd_per_gpu_hour": 0.5, "note": "cpu only"}]}`))
	if !ok {
		t.Fatal("no table")
	}
	want := [][]string{{"miner-1", "2.346", "true", dash}, {"miner-2", "0.5", dash, "cpu only"}}
	if strings.Join(tb.Head, ",") != "miner,usd_per_gpu_hour,profitable,note" || len(tb.Rows) != 2 {
		t.Fatalf("table %+v", tb)
	}
	for i, r := range tb.Rows {
		if strings.Join(r.Cells, ",") != strings.Join(want[i], ",") {
			t.Errorf("row %d %v, want %v", i, r.Cells, want[i])
		}
	}
	// Through Write: a summary.json with the array renders it.
	s := sample()
	data, _ := json.Marshal(s)
	var top map[string]any
	json.Unmarshal(data, &top)
	top["profitability"] = []map[string]any{{"miner": "miner-1", "usd_per_gpu_hour": 1.25}}
	data, _ = json.Marshal(top)
	out := markdown(newView(s, data))
	if !strings.Contains(string(out), "| miner | usd_per_gpu_hour |\n|---|---|\n| miner-1 | 1.25 |") {
		t.Errorf("profitability not rendered:\n%s", out)
	}
}
