package metrics

import (
	"strings"
	"testing"

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
