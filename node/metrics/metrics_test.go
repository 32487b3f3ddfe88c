package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/protocol/scoring"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestReasonClass(t *testing.T) {
	for reason, want := range map[string]string{
		"":                              "",
		"no commitment within 5s":       "deadline",
		"validator shut down mid-round": "shutdown",
		"sub-challenge 0: tile request failed: stream reset": "tiles",
		"sub-challenge 1: tile 17: leaf does not match root": "proof",
		"sub-challenge 0: proof: bad length":                 "proof",
		"cannot size a challenge: no GPU fits":               "challenge",
		"publishing reveal: closed":                          "gossip",
		"something nobody expected \x00\xff":                 "other",
	} {
		if got := ReasonClass(reason); got != want {
			t.Errorf("ReasonClass(%q) = %q, want %q", reason, got, want)
		}
	}
}

// A hostile stream of distinct reasons must not grow the series.
func TestRoundLabelsAreBounded(t *testing.T) {
	m := New()
	for i := 0; i < 1000; i++ {
		m.Round(false, "tile "+strings.Repeat("x", i%50)+" mismatch", 0, 0, 0)
		m.Round(false, strings.Repeat("?", i+1), 0, 0, 0)
	}
	if n := testutil.CollectAndCount(m.rounds); n != 2 {
		t.Fatalf("%d pog_rounds_total series, want 2 (proof, other)", n)
	}
	var nilMetrics *Metrics
	nilMetrics.Round(true, "", 1, 1, 1) // a node without an API
	nilMetrics.Gossip("t", "accept")
}

// pog_miner_score holds the latest closed epoch's parts of each miner
// scored in it, and nothing of a miner scored only before.
func TestEpochScoresKeepTheLatestEpoch(t *testing.T) {
	m := New()
	a := scoring.Score{Miner: "a", Total: 0.35, GPU: 0.5, Throughput: 0.4, Memory: 0.9, Availability: 0.75, CPU: 0.1, RAM: 0.2, Storage: 0.3}
	b := scoring.Score{Miner: "b", Total: 0.01, CPU: 0.05, Availability: 1}
	m.EpochScores(7, []scoring.Score{a, b})
	want := map[string]float64{"a/total": a.Total, "a/gpu": a.GPU, "a/throughput": a.Throughput, "a/memory": a.Memory,
		"a/availability": a.Availability, "a/cpu": a.CPU, "a/ram": a.RAM, "a/storage": a.Storage,
		"b/total": b.Total, "b/gpu": 0, "b/throughput": 0, "b/memory": 0, "b/availability": b.Availability, "b/cpu": b.CPU, "b/ram": 0, "b/storage": 0}
	checkScores(t, m, 7, want)
	m.EpochScores(8, []scoring.Score{b})
	for k := range want {
		if strings.HasPrefix(k, "a/") {
			delete(want, k)
		}
	}
	checkScores(t, m, 8, want)
	var nilMetrics *Metrics
	nilMetrics.EpochScores(1, []scoring.Score{a})
}

// checkScores compares the exposed pog_miner_score series, by miner/part,
// and pog_miner_score_epoch with want and e.
func checkScores(t *testing.T, m *Metrics, e uint64, want map[string]float64) {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			switch f.GetName() {
			case "pog_miner_score":
				l := map[string]string{}
				for _, p := range s.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				got[l["miner"]+"/"+l["part"]] = s.GetGauge().GetValue()
			case "pog_miner_score_epoch":
				if s.GetGauge().GetValue() != float64(e) {
					t.Errorf("pog_miner_score_epoch %v, want %d", s.GetGauge().GetValue(), e)
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d series %v, want %d %v", len(got), got, len(want), want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("pog_miner_score %s = %v (exported %v), want %v", k, g, ok, v)
		}
	}
}

// The example Grafana dashboard queries only metrics a node exports.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/pog.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct{ Targets []struct{ Expr string } }
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("pog.json: %v", err)
	}
	m := New()
	one := func() float64 { return 1 }
	m.AddGauges(Gauges{Peers: one, StoreBytes: one, Queue: one})
	m.Round(true, "", time.Second, time.Second, 1) // histograms and vectors export once observed
	m.Gossip("t", "accept")
	m.EpochClosed(time.Second)
	m.EpochScores(1, []scoring.Score{{Miner: "m"}})
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	name := regexp.MustCompile(`pog_[a-z_]+`)
	used := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if !exported[n] && !exported[base] {
					t.Errorf("dashboard queries %s, which the node does not export", n)
				}
				used++
			}
		}
	}
	if used < 10 {
		t.Fatalf("only %d metric references found in the dashboard", used)
	}
}
