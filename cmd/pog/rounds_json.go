package main

import (
	"encoding/hex"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// roundRow is one line of `pog rounds`; with --json it carries what another
// implementation needs to re-derive the round's sample (SPEC §2–§9).
type roundRow struct {
	Epoch     uint64  `json:"epoch"`
	Round     uint64  `json:"round"`
	Miner     string  `json:"miner"`
	MinerHex  string  `json:"miner_hex"` // the multihash bytes the parameters carry (§2)
	Validator string  `json:"validator"`
	Verdict   string  `json:"verdict"`
	Reason    string  `json:"reason,omitempty"`
	TFLOPS    float64 `json:"tflops"`
	FLOPs     float64 `json:"flops"`
	CommitMS  float64 `json:"commit_ms"`
	VerifyMS  float64 `json:"verify_ms"`
	Samples   int     `json:"samples"` // sampled tiles of the whole round
	// ChallengeID is the challenge's message ID (SPEC §14), hex.
	ChallengeID      string `json:"challenge_id,omitempty"`
	SecretCommitment string `json:"secret_commitment,omitempty"` // H(s), hex
	// Secret is s, hex, present only once revealed: the validator reveals
	// it after the last root arrives.
	Secret string `json:"secret,omitempty"`
	Steps  uint32 `json:"steps,omitempty"`
	// Params are step 0's canonical encodings (§2), one per sub-challenge,
	// with their nonces; Roots the committed roots, step-major (steps ×
	// sub-challenges), all hex.
	Params []string `json:"params,omitempty"`
	Nonces []string `json:"nonces,omitempty"`
	Roots  []string `json:"roots,omitempty"`
	// Indices are the round's sampled tiles (§8.3), Leaves their chaining
	// values in index order and BatchProofs the stored inclusion proofs, hex.
	Indices     []uint64 `json:"indices,omitempty"`
	Leaves      []string `json:"leaves,omitempty"`
	BatchProofs []string `json:"batch_proofs,omitempty"`
}

// roundRowOf describes a stored round record. Envelopes are decoded without
// re-checking signatures (they were checked when stored; audit checks them).
func roundRowOf(r *store.RoundRecord) roundRow {
	row := roundRow{Epoch: r.Epoch, Round: r.Round, Miner: peer.ID(r.Miner).String(), MinerHex: hex.EncodeToString(r.Miner),
		Validator: peer.ID(r.Validator).String(), Verdict: r.Verdict.String(), Reason: r.Reason, TFLOPS: r.TFLOPS, FLOPs: r.FLOPs,
		CommitMS: float64(r.CommitNanos) / 1e6, VerifyMS: float64(r.VerifyNanos) / 1e6, Samples: len(r.Indices)}
	if len(r.Commitment) > 0 {
		row.Secret = hex.EncodeToString(r.Secret[:])
	}
	row.Indices = r.Indices
	for _, l := range r.Leaves {
		row.Leaves = append(row.Leaves, hex.EncodeToString(l[:]))
	}
	for _, p := range r.Proofs {
		row.BatchProofs = append(row.BatchProofs, hex.EncodeToString(p))
	}
	o, err := protocol.Decode(r.Challenge, pb.MessageType_CHALLENGE)
	if err != nil {
		return row
	}
	ch := o.Msg.(*pb.Challenge)
	id := protocol.ID(o.Body)
	row.ChallengeID, row.SecretCommitment = hex.EncodeToString(id[:]), hex.EncodeToString(ch.SecretCommitment)
	row.Steps = ch.Steps
	for _, enc := range ch.Params {
		row.Params = append(row.Params, hex.EncodeToString(enc))
		if p, err := proof.DecodeParams(enc); err == nil {
			row.Nonces = append(row.Nonces, hex.EncodeToString(p.Nonce[:]))
		}
	}
	if c, err := protocol.Decode(r.Commitment, pb.MessageType_COMMITMENT); err == nil {
		for _, root := range c.Msg.(*pb.Commitment).Roots {
			row.Roots = append(row.Roots, hex.EncodeToString(root))
		}
	}
	return row
}
