package epoch

import (
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// MinerScore is one miner's score in one epoch of a validator's evidence,
// with every figure of the formula behind it and the rounds it came from
// (`pog explain`, the API's /api/v1/miners/{id}/score).
type MinerScore struct {
	Epoch     uint64 `json:"epoch"`
	Validator string `json:"validator"`
	scoring.Breakdown
	Rounds []ScoredRound `json:"rounds"`
}

// ScoredRound is one of a miner's rounds and how it counted.
type ScoredRound struct {
	Round             uint64      `json:"round"`
	Precision         string      `json:"precision"` // fp16, fp32, or unknown (the challenge does not decode)
	Probe             bool        `json:"probe"`
	TFLOPS            float64     `json:"tflops"`
	ProvenMemoryBytes uint64      `json:"proven_memory_bytes"`
	Verdict           string      `json:"verdict"`
	Use               scoring.Use `json:"use"`
	Reason            string      `json:"reason,omitempty"` // why it failed or was missed
}

// ErrNoStoredEvidence marks a store without the round evidence asked for.
var ErrNoStoredEvidence = errors.New("no round evidence")

// Explain scores epoch e (nil: the latest with round evidence, preferring
// one its validator closed, as Pricing does) from the store's round
// evidence and returns each miner's breakdown, sorted by miner, and the
// epoch.
func Explain(st *store.Store, c scoring.Config, e *uint64) ([]MinerScore, uint64, error) {
	var epoch uint64
	var v peer.ID
	var found bool
	var err error
	if e == nil {
		epoch, v, found, err = latestEvidence(st)
	} else {
		epoch = *e
		v, found, err = evidenceValidator(st, epoch)
	}
	if err != nil {
		return nil, epoch, err
	}
	if !found {
		what := "in this store"
		if e != nil {
			what = fmt.Sprintf("of epoch %d in this store (pruned node.retain_evidence_epochs after finality?)", epoch)
		}
		return nil, epoch, fmt.Errorf("%w %s: a validator's home holds its own", ErrNoStoredEvidence, what)
	}
	scores, err := ExplainEpoch(st, c, v, epoch)
	return scores, epoch, err
}

// evidenceValidator is the validator whose rounds of epoch e st holds.
func evidenceValidator(st *store.Store, e uint64) (peer.ID, bool, error) {
	for r, err := range st.Rounds(e, e) {
		if err != nil {
			return "", false, err
		}
		return peer.ID(r.Validator), true, nil
	}
	return "", false, nil
}

// ExplainEpoch scores epoch e of v's evidence exactly as v's Scorer
// does, carrying penalties from the epochs before it, and returns each
// miner's breakdown, sorted by miner.
func ExplainEpoch(st *store.Store, c scoring.Config, v peer.ID, e uint64) ([]MinerScore, error) {
	var ins []scoring.Input
	var recs [][]*store.RoundRecord
	s := &Scorer{Store: st, Validator: v, Config: c, Resume: true,
		inspect: func(ep uint64, i []scoring.Input, r [][]*store.RoundRecord) {
			if ep == e {
				ins, recs = i, r
			}
		}}
	if _, _, err := s.Close(e); err != nil {
		return nil, err
	}
	out := make([]MinerScore, len(ins))
	for i, in := range ins {
		b := scoring.Explain(c, in)
		out[i] = MinerScore{Epoch: e, Validator: v.String(), Breakdown: b, Rounds: scoredRounds(in.Rounds, recs[i], b.Uses)}
	}
	return out, nil
}

// scoredRounds pairs a miner's stored rounds with their scoring inputs
// and uses (all three in one order).
func scoredRounds(rs []scoring.Round, recs []*store.RoundRecord, uses []scoring.Use) []ScoredRound {
	out := make([]ScoredRound, len(recs))
	for i, r := range recs {
		prec := "unknown"
		switch rs[i].Precision {
		case scoring.FP16:
			prec = "fp16"
		case scoring.FP32:
			prec = "fp32"
		}
		out[i] = ScoredRound{Round: r.Round, Precision: prec, Probe: rs[i].Probe, TFLOPS: r.TFLOPS,
			ProvenMemoryBytes: rs[i].ProvenMemoryBytes, Verdict: r.Verdict.String(), Use: uses[i], Reason: r.Reason}
	}
	return out
}
