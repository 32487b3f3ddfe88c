package adversary

import (
	"fmt"
	"math"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
)

// TestAccompliceWithinLimit: a dishonest validator beside h honest ones
// (equal stakes, every miner of the same hardware weighed alike) that
// gives all its weight to an accomplice lifts it over an honest twin by
// 1/(1 − s): the bound, met exactly. Beside one honest validator it holds
// half the stake, sets consensus, and no bound holds.
func TestAccompliceWithinLimit(t *testing.T) {
	for _, honest := range []int{1, 2, 4, 15} {
		miners := []string{"accomplice", "twin", "other-a", "other-b"}
		in := consensus.Input{Stakes: map[string]float64{"dishonest": 1}, Weights: map[string]map[string]float64{}}
		for i := range honest {
			v := fmt.Sprintf("honest-%d", i)
			in.Stakes[v] = 1
			in.Weights[v] = map[string]float64{"accomplice": 1, "twin": 1, "other-a": 2, "other-b": 0.5}
		}
		rec := &pb.EpochRecord{}
		for _, m := range miners {
			rec.Weights = append(rec.Weights, &pb.MinerWeight{Miner: []byte(m), Weight: 1})
		}
		SkewWeights(rec, peer.ID("accomplice"))
		in.Weights["dishonest"] = map[string]float64{}
		for _, w := range rec.Weights {
			in.Weights["dishonest"][string(w.Miner)] = w.Weight
		}
		res, err := consensus.Compute(consensus.DefaultParams(), in)
		if err != nil {
			t.Fatal(err)
		}
		inc := map[string]float64{}
		for j, m := range res.Miners {
			inc[m] = res.Incentive[j]
		}
		gain, limit := inc["accomplice"]/inc["twin"], AccompliceLimit(honest)
		if math.Abs(gain-limit) > 1e-9 && !(honest < 2 && gain > 2) {
			t.Errorf("%d honest validators: accomplice gains %.4f, want the limit %.4f", honest, gain, limit)
		}
		t.Logf("%d honest validators: accomplice gains %.4f, limit %.4f", honest, gain, limit)
	}
}

// TestSkewWeightsWithoutAccomplice: a record that does not weigh the
// accomplice is left weighing no one.
func TestSkewWeightsWithoutAccomplice(t *testing.T) {
	rec := &pb.EpochRecord{Weights: []*pb.MinerWeight{{Miner: []byte("a"), Weight: 0.3}, {Miner: []byte("b"), Weight: 0.7}}}
	SkewWeights(rec, peer.ID("c"))
	for _, w := range rec.Weights {
		if w.Weight != 0 {
			t.Errorf("miner %s weighed %v, want 0", w.Miner, w.Weight)
		}
	}
}
