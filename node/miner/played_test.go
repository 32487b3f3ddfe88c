package miner

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// TestPlayedBounded: a validator sending many results, long reasons or
// non-finite TFLOPS leaves a bounded list the API can encode.
func TestPlayedBounded(t *testing.T) {
	var p played
	c := &Challenge{Validator: "v", Msg: &pb.Challenge{Epoch: 1}}
	for i := range playedRounds + 10 {
		c.Msg.Round = uint64(i)
		p.result(c, 6, &round.Result{Reason: strings.Repeat("é", playedReasonLen), TFLOPS: math.NaN(), PeakTFLOPS: math.Inf(1)}, "")
	}
	for range playedHostRounds + 3 {
		p.host(PlayedHostRound{Validator: "v"}, nil)
	}
	rounds, hosts := p.snapshot()
	if len(rounds) != playedRounds || rounds[0].Round != 10 || rounds[len(rounds)-1].Round != playedRounds+9 || len(hosts) != playedHostRounds {
		t.Fatalf("%d rounds from %d to %d, %d host rounds", len(rounds), rounds[0].Round, rounds[len(rounds)-1].Round, len(hosts))
	}
	r := rounds[0]
	if r.Verdict != "failed" || r.TFLOPS != 0 || r.Peak != 0 || len(r.Reason) > playedReasonLen || !utf8.ValidString(r.Reason) || r.Reason == "" {
		t.Fatalf("round %+v", r)
	}
}
