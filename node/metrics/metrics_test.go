package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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
