package api

import (
	"testing"
)

// TestOwnRounds: a miner's rounds and host rounds come from its snapshot,
// oldest first, durations in milliseconds; without any both lists are
// empty, not null.
func TestOwnRounds(t *testing.T) {
	f := newFixture(t)
	own := getJSON[OwnRounds](t, New(Options{Live: f, Store: f.st}), "/api/v1/own/rounds")
	if len(own.Rounds) != len(f.snap.Played) || len(own.HostRounds) != len(f.snap.HostPlayed) {
		t.Fatalf("%d rounds, %d host rounds; the snapshot has %d and %d", len(own.Rounds), len(own.HostRounds), len(f.snap.Played), len(f.snap.HostPlayed))
	}
	for i, r := range own.Rounds {
		p := f.snap.Played[i]
		if r.Validator != p.Validator.String() || r.Round != p.Round || r.Verdict != p.Verdict || r.TFLOPS != p.TFLOPS ||
			r.PeakTFLOPS != p.Peak || r.Reason != p.Reason || !r.At.Equal(p.At) || r.Probe != p.Probe {
			t.Errorf("round %d: %+v, played %+v", i, r, p)
		}
	}
	if h := own.HostRounds[0]; h.Kind != "cpu" || h.ProveMS != 800 || h.RootByMS != 1000 || !h.Served || h.Error != "" {
		t.Errorf("served host round: %+v", h)
	}
	if h := own.HostRounds[1]; h.Served || h.Error == "" {
		t.Errorf("unserved host round: %+v", h)
	}
	f.snap.Played, f.snap.HostPlayed = nil, nil
	code, body := get(t, New(Options{Live: f, Store: f.st}), "/api/v1/own/rounds")
	if code != 200 || string(body) != `{"rounds":[],"host_rounds":[]}`+"\n" {
		t.Errorf("no rounds: %d %s", code, body)
	}
}
