package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pog-network/pog/node/api"
)

// TestWriteOwnRounds: a miner's status lists its latest rounds, newest
// first and at most ownRoundsShown, and says none when it has none.
func TestWriteOwnRounds(t *testing.T) {
	var out bytes.Buffer
	writeOwnRounds(&out, nil)
	if !strings.Contains(out.String(), "none yet") {
		t.Fatalf("no rounds: %q", out.String())
	}
	var rs []api.PlayedRound
	for i := range 15 {
		rs = append(rs, api.PlayedRound{Epoch: 7, Round: uint64(100 + i), Validator: "12D3KooWValidatorA", Verdict: "verified", TFLOPS: 0.5})
	}
	rs[14].Verdict, rs[14].Reason = "failed", "step 3 root after the deadline"
	out.Reset()
	writeOwnRounds(&out, rs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	rows := lines[2:] // a title, a header
	if len(rows) != ownRoundsShown {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), ownRoundsShown, out.String())
	}
	if f := strings.Fields(rows[0]); f[1] != "114" || f[3] != "failed" || !strings.HasSuffix(rows[0], "step 3 root after the deadline") {
		t.Fatalf("first row is not the newest round: %q", rows[0])
	}
	if f := strings.Fields(rows[len(rows)-1]); f[1] != "105" {
		t.Fatalf("last row %q, want round 105", rows[len(rows)-1])
	}
}
