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
	Samples   int     `json:"samples"` // sampled tiles, all sub-challenges together
	// ChallengeID is the challenge's message ID (SPEC §14), hex.
	ChallengeID      string `json:"challenge_id,omitempty"`
	SecretCommitment string `json:"secret_commitment,omitempty"` // H(s), hex
	// Secret is s, hex, present only once revealed: the validator reveals
	// it after a commitment arrives.
	Secret string            `json:"secret,omitempty"`
	Subs   []subChallengeRow `json:"sub_challenges,omitempty"`
}

// subChallengeRow is one sub-challenge of a round.
type subChallengeRow struct {
	Params  string   `json:"params"` // canonical encoding (§2), hex
	Nonce   string   `json:"nonce"`  // hex
	Root    string   `json:"root,omitempty"`
	Indices []uint64 `json:"indices,omitempty"` // sampled tiles (§8.3), ascending
	// Leaves are the sampled tiles' chaining values (§6), in index order,
	// and BatchProof their inclusion proof (§7), hex, where stored.
	Leaves     []string `json:"leaves,omitempty"`
	BatchProof string   `json:"batch_proof,omitempty"`
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
	o, err := protocol.Decode(r.Challenge, pb.MessageType_CHALLENGE)
	if err != nil {
		return row
	}
	ch := o.Msg.(*pb.Challenge)
	id := protocol.ID(o.Body)
	row.ChallengeID, row.SecretCommitment = hex.EncodeToString(id[:]), hex.EncodeToString(ch.SecretCommitment)
	var roots [][]byte
	if c, err := protocol.Decode(r.Commitment, pb.MessageType_COMMITMENT); err == nil {
		roots = c.Msg.(*pb.Commitment).Roots
	}
	// Indices hold each sub-challenge's sample in turn: min(samples, tiles)
	// of them per sub-challenge.
	rest, leaves := r.Indices, r.Leaves
	for i, enc := range ch.Params {
		sub := subChallengeRow{Params: hex.EncodeToString(enc)}
		p, err := proof.DecodeParams(enc)
		if err == nil {
			sub.Nonce = hex.EncodeToString(p.Nonce[:])
			n := min(uint64(ch.Samples), p.Tiles(), uint64(len(rest)))
			sub.Indices, rest = rest[:n], rest[n:]
			if len(r.Leaves) == len(r.Indices) {
				for _, l := range leaves[:n] {
					sub.Leaves = append(sub.Leaves, hex.EncodeToString(l[:]))
				}
				leaves = leaves[n:]
			}
		}
		if i < len(roots) {
			sub.Root = hex.EncodeToString(roots[i])
		}
		if len(r.Proofs) == len(ch.Params) {
			sub.BatchProof = hex.EncodeToString(r.Proofs[i])
		}
		row.Subs = append(row.Subs, sub)
	}
	return row
}
