package node

import (
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// challengePlan is what a validator sends one miner in one round.
type challengePlan struct {
	params  []proof.Params
	secret  [32]byte
	samples int
}

// planChallenge sizes a challenge from the validator's own limits and the
// miner's announced capacity: one sub-challenge per announced GPU (one for a
// CPU miner), each the largest square output ≤ cfg.Size that fits the
// capacity. The miner never reports a size back; its root is checked
// against these parameters. Nonces and the secret come from rnd.
func planChallenge(cfg ValidatorConfig, miner peer.ID, ann *pb.MinerAnnounce, rnd io.Reader) (challengePlan, error) {
	var pl challengePlan
	prec, err := proof.ParsePrecision(cfg.Precision)
	if err != nil {
		return pl, err
	}
	if !supports(ann, prec) {
		prec = proof.Precision(ann.Precisions[0])
	}
	t := uint32(0)
	for e := uint32(proof.MinTile); e <= proof.MaxTile; e *= 2 {
		if int(4*e*e) == cfg.TileBytes {
			t = e
		}
	}
	if t == 0 {
		return pl, fmt.Errorf("tile size %d is not 4·t² for a valid t", cfg.TileBytes)
	}
	size := cfg.Size / t * t
	for size >= 2*t && 4*uint64(size)*uint64(size) > ann.MaxOutputBytes {
		size -= t
	}
	if size < 2*t {
		return pl, fmt.Errorf("miner %s: capacity of %d bytes cannot hold two %d-byte tiles", miner, ann.MaxOutputBytes, 4*t*t)
	}
	subs := min(max(1, len(ann.Gpus)), protocol.MaxSubChallenges)
	for i := 0; i < subs; i++ {
		p := proof.Params{Precision: prec, Batch: 1, M: size, K: min(cfg.K, prec.MaxK()), N: size, Tile: t, Miner: []byte(miner)}
		if _, err := io.ReadFull(rnd, p.Nonce[:]); err != nil {
			return pl, err
		}
		if err := p.Validate(); err != nil {
			return pl, err
		}
		pl.params = append(pl.params, p)
	}
	if _, err := io.ReadFull(rnd, pl.secret[:]); err != nil {
		return pl, err
	}
	pl.samples, err = sample.Count(cfg.DetectFraction, cfg.DetectProbability, pl.params[0].Tiles())
	return pl, err
}

func supports(ann *pb.MinerAnnounce, p proof.Precision) bool {
	for _, x := range ann.Precisions {
		if proof.Precision(x) == p {
			return true
		}
	}
	return false
}
