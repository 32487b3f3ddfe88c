package round

import (
	"testing"
	"time"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// A miner waits for a beacon only once the steps it may compute are done,
// and its waits add up: a validator answering late spends the round's
// budget, one answering at once spends none.
func TestStallAddsUpBeaconWaits(t *testing.T) {
	c := proof.Chain{Steps: 4, Template: []proof.Params{{Precision: proof.FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("miner")}}}
	c.ID[0] = 7
	m, err := NewMiner(c)
	if err != nil {
		t.Fatal(err)
	}
	var s Stall
	t0 := time.Unix(1_800_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	root := []commit.CV{{1}}
	m.Begin()
	if m.Waiting() {
		t.Fatal("waiting while step 0 computes")
	}
	m.Step(StepDone{Step: 0, Roots: root})
	m.Step(StepDone{Step: 1, Roots: root})
	if !m.Waiting() {
		t.Fatal("step 2 needs beacon 0: the miner waits")
	}
	const budget = 5 * time.Second
	s.Note(m.Waiting(), at(0))
	if got := s.Left(budget, at(2*time.Second)); got != 3*time.Second {
		t.Errorf("2 s into the first wait: %v left, want 3s", got)
	}
	m.Step(BeaconIn{Step: 0})
	s.Note(m.Waiting(), at(3*time.Second))
	if m.Waiting() {
		t.Fatal("waiting while step 2 computes")
	}
	if got := s.Left(budget, at(time.Hour)); got != 2*time.Second {
		t.Errorf("no wait in progress: %v left, want 2s", got)
	}
	m.Step(StepDone{Step: 2, Roots: root})
	s.Note(m.Waiting(), at(4*time.Second))
	if got := s.Left(budget, at(6*time.Second)); got != 0 {
		t.Errorf("second wait spent the rest: %v left, want 0", got)
	}
}
