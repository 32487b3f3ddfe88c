package api

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/scoring"
)

// TestScores: each miner's breakdown is the score the validator's scorer
// computes (as Pricing replays it), with its rounds and why they counted as
// they did; bad requests are 400s and missing evidence 404s.
func TestScores(t *testing.T) {
	f := newFixture(t)
	h := New(Options{Live: f, Store: f.st})
	all := getJSON[[]epoch.MinerScore](t, h, "/api/v1/scores")
	rows, err := epoch.Pricing(f.st, scoring.DefaultConfig(), 0.7)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(rows) != 2 || all[0].Epoch != 5 || all[0].Validator != f.validator.String() {
		t.Fatalf("scores: %+v", all)
	}
	for i, r := range rows {
		if !reflect.DeepEqual(all[i].Score, r.Score) {
			t.Errorf("miner %s: breakdown's score %+v, the scorer's %+v", r.Miner, all[i].Score, r.Score)
		}
	}
	// Miner 0's rounds verified but their challenges do not decode; miner
	// 1's failed in epochs 4 and 5.
	if r := all[0].Rounds; len(r) != 1 || r[0].Use != scoring.UseUnknown || r[0].Precision != "unknown" || r[0].Round != 50 {
		t.Errorf("miner 0's rounds: %+v", r)
	}
	path := "/api/v1/miners/" + f.miners[1].String() + "/score"
	one := getJSON[epoch.MinerScore](t, h, path)
	if r := one.Rounds; len(r) != 1 || r[0].Use != scoring.UseFailed || r[0].Reason != "no commitment within 5s" {
		t.Errorf("miner 1's rounds: %+v", r)
	}
	if one.CarriedPenalty != 1 || one.Penalty != 1 || one.Parts[1].Note == "" || one.Total != 0 {
		t.Errorf("miner 1 failed in epoch 4 and 5: %+v", one)
	}
	if e4 := getJSON[epoch.MinerScore](t, h, path+"?epoch=4"); e4.Epoch != 4 || e4.CarriedPenalty != 0 {
		t.Errorf("epoch 4: %+v", e4)
	}
	for p, want := range map[string]int{
		"/api/v1/miners/nonsense/score":                             http.StatusBadRequest,
		"/api/v1/scores?epoch=x":                                    http.StatusBadRequest,
		"/api/v1/scores?epoch=9":                                    http.StatusNotFound,
		"/api/v1/miners/" + f.validator.String() + "/score":         http.StatusNotFound,
		"/api/v1/miners/" + f.miners[0].String() + "/score?epoch=9": http.StatusNotFound,
	} {
		if code, body := get(t, h, p); code != want {
			t.Errorf("%s: %d %s, want %d", p, code, body, want)
		}
	}
	empty, err := openEmpty(t)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, New(Options{Live: f, Store: empty}), "/api/v1/scores"); code != http.StatusNotFound {
		t.Errorf("scores on an empty store: %d %s", code, body)
	}
}
