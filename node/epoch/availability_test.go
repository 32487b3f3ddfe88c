package epoch

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// reasonOf plays one round on the real validator machine with events and
// returns the reason it fails with, so the classifier is tested against the
// messages the machine produces, not copies of them.
func reasonOf(t *testing.T, evs ...any) string {
	t.Helper()
	c := proof.Chain{Steps: 4}
	c.ID[0] = 7
	c.Template = []proof.Params{{Precision: proof.FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("m")}}
	secret := [32]byte{9}
	v, err := round.NewValidator(round.Plan{Chain: c, Secret: secret, Commitment: sample.Commit(secret), Samples: 1,
		FirstRootBy: time.Second, Deadline: 4 * time.Second, Window: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range append([]any{round.Start{}}, evs...) {
		for _, a := range v.Step(ev) {
			if f, ok := a.(round.Finish); ok {
				return f.Outcome.Reason
			}
		}
	}
	t.Fatal("round did not finish")
	return ""
}

func TestMissedRound(t *testing.T) {
	root := round.Root{Step: 0, At: 100 * time.Millisecond, Roots: make([]commit.CV, 1)}
	committed := []any{root}
	for i := 1; i < 4; i++ {
		committed = append(committed, round.Root{Step: i, At: time.Duration(i+1) * 100 * time.Millisecond, Roots: make([]commit.CV, 1)})
	}
	committed = append(committed, round.Committed{At: time.Second, Roots: [][]commit.CV{make([]commit.CV, 1), make([]commit.CV, 1), make([]commit.CV, 1), make([]commit.CV, 1)}})
	tilesThen := func(e round.Tiles) string { return reasonOf(t, append(committed, e)...) }
	tests := []struct {
		name      string
		reason    string
		committed bool
		missed    bool
	}{
		{"no first root", reasonOf(t, round.Timer{At: time.Second}), false, true},
		{"stopped before its commitment", reasonOf(t, root, round.Timer{At: 4 * time.Second}), false, true},
		{"stream closed", reasonOf(t, round.Closed{Err: errors.New("reset")}), false, true},
		{"unreachable", "open round stream: dial backoff", false, true},
		{"challenge not delivered", "sending challenge: stream reset", false, true},
		{"bad frame", reasonOf(t, round.Root{Step: 2, At: time.Millisecond, Roots: make([]commit.CV, 1)}), false, false},
		{"bad commitment", "commitment signed by x, not the miner", false, false},
		{"closed after committing", "round stream closed: EOF", true, false},
		{"bad tile", "step 1: tile 3: leaf does not match", true, false},
		{"first root late", reasonOf(t, round.Root{Step: 0, At: 2 * time.Second, Roots: make([]commit.CV, 1)}), false, true},
		{"root after the deadline", reasonOf(t, root, round.Root{Step: 1, At: 5 * time.Second, Roots: make([]commit.CV, 1)}), false, true},
		{"tiles never came", tilesThen(round.Tiles{Err: errors.New("i/o deadline reached"), Unanswered: true}), true, true},
		{"tiles refused", tilesThen(round.Tiles{Err: errors.New("miner could not serve tiles: gone")}), true, false},
	}
	for _, tt := range tests {
		r := &store.RoundRecord{Verdict: store.VerdictFailed, Reason: tt.reason}
		if tt.committed {
			r.Commitment = []byte{1}
		}
		if got := MissedRound(r); got != tt.missed {
			t.Errorf("%s (%q): missed = %v, want %v", tt.name, tt.reason, got, tt.missed)
		}
	}
	if MissedRound(&store.RoundRecord{Verdict: store.VerdictVerified}) {
		t.Error("a verified round counted as missed")
	}
}

// The epoch's scoring input (which pog audit recomputes the same way) marks
// missed rounds, so availability comes from the stored records alone.
func TestScoringInputAvailability(t *testing.T) {
	recs := []*store.RoundRecord{
		{Verdict: store.VerdictVerified, TFLOPS: 10},
		{Verdict: store.VerdictFailed, Reason: "no first root within 1s"},
		{Verdict: store.VerdictFailed, Reason: "step 1: tile 3: leaf does not match", Commitment: []byte{1}},
	}
	in := scoringInput("m", recs, nil, 0)
	var missed, verified int
	for _, r := range in.Rounds {
		if r.Missed {
			missed++
		}
		if r.Verified {
			verified++
		}
	}
	if verified != 1 || missed != 1 || len(in.Rounds) != 3 {
		t.Fatalf("verified %d, missed %d of %d rounds; want 1, 1 of 3", verified, missed, len(in.Rounds))
	}
}

// TestWithholdingTilesDoesNotPay checks SPEC §18's argument for counting
// unanswered tile requests as missed: a miner that computes a share 1 − ε
// of a round's tiles and withholds its answer whenever a sample lands on
// the rest passes with the exact probability of k distinct samples all
// missing εT tiles, and even credited as if its passed rounds had taken
// (1 − ε) of the time on (1 − ε) of the device, it earns less per unit of
// device time than an honest miner, for every ε. The sample it faces is
// the real one (sample.Indices over secrets it cannot know when it
// commits), so the empirical pass rate matches the exact one.
func TestWithholdingTilesDoesNotPay(t *testing.T) {
	const tiles = 4096
	k, err := sample.Count(0.1, 0.999, tiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{1e-4, 1e-3, 0.005, 0.01, 0.05, 0.1, 0.5} {
		pass := 1 - sample.DetectProbability(k, eps, tiles)
		if pay := pass / ((1 - eps) * (1 - eps)); pay >= 1 {
			t.Errorf("ε = %v: pay per device time %.4f of honest work", eps, pay)
		}
	}
	// ε = 0.01: the miner skips 41 tiles it picks before the reveal.
	skipped := map[uint64]bool{}
	for i := uint64(0); len(skipped) < 41; i++ {
		skipped[(i*2654435761)%tiles] = true
	}
	const n = 4000
	passed := 0
	for i := range n {
		var secret, root [32]byte
		secret[0], secret[1], root[0] = byte(i), byte(i>>8), 7
		hit := false
		for _, x := range sample.Indices(secret, root, []byte("params"), tiles, k) {
			hit = hit || skipped[x]
		}
		if !hit {
			passed++
		}
	}
	want := 1 - sample.DetectProbability(k, 41.0/tiles, tiles)
	sigma := math.Sqrt(want * (1 - want) / n)
	if got := float64(passed) / n; math.Abs(got-want) > 4*sigma {
		t.Errorf("withholding miner passed %.3f of rounds, the exact rate is %.3f", got, want)
	}
}
