package plan

import (
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/scoring"
)

// ClassShare is one precision class and its share of a validator's rounds.
type ClassShare struct {
	Prec  proof.Precision
	Share float64
}

// ClassShares are the scoring config's class weights: each validator's
// rounds cover every class in these proportions, whatever the miner
// announces, so every validator scores the same classes the same way.
func ClassShares(c scoring.Config) []ClassShare {
	return []ClassShare{{proof.FP16, c.FP16Weight}, {proof.FP32, c.FP32Weight}}
}

// NextPrecision picks the class of a miner's next round from the rounds of
// each class it already had this epoch: the class furthest behind its share
// (share·(n+1) − count, n rounds so far; ties to the lower class number).
// Deterministic, so any prefix of an epoch's rounds is within one round of
// the proportions; unpredictable enough, since round times are random.
func NextPrecision(shares []ClassShare, counts map[proof.Precision]int) proof.Precision {
	n := 0
	for _, c := range counts {
		n += c
	}
	best, deficit := shares[0].Prec, 0.0
	for i, s := range shares {
		d := s.Share*float64(n+1) - float64(counts[s.Prec])
		if i == 0 || d > deficit {
			best, deficit = s.Prec, d
		}
	}
	return best
}
