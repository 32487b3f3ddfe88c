package node

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// BenchmarkRoundWire reports the bytes one round puts on the wire between
// validator and miner, from the real encodings of a round planned with the
// default configuration for an H200 (600 TFLOPS measured, 20 ms round
// trip): the challenge, every step root and beacon, the commitment, the
// reveal, the tile request and response (proofs and tiles) and the result.
// Gossip copies to other peers are not counted.
func BenchmarkRoundWire(b *testing.B) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	_, mpub, _ := crypto.GenerateEd25519Key(rand.Reader)
	miner, _ := peer.IDFromPublicKey(mpub)
	ann := &pb.MinerAnnounce{Precisions: []uint32{1, 2}, MaxOutputBytes: 16 << 30, Gpus: []*pb.GPU{{Name: "H200"}}}
	var total, tiles, control float64
	for b.Loop() {
		pl, err := plan.Challenge(config.DefaultConfig().Validator, miner, ann, 0, proof.FP16, 600, 600, 20*time.Millisecond, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		sc := sample.Commit(pl.Secret)
		msg := &pb.Challenge{Version: 1, Epoch: 1, Round: 1, Miner: []byte(miner), SecretCommitment: sc[:],
			Samples: uint32(pl.Samples), Steps: uint32(pl.Steps), DeadlineMs: uint32(pl.Deadline.Milliseconds()), FirstRootMs: 1}
		for _, p := range pl.Params {
			e, _ := p.MarshalBinary()
			msg.Params = append(msg.Params, e)
		}
		raw, _ := protocol.Seal(key, msg)
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		frame := func(f *pb.RoundFrame) { protocol.WriteRoundFrame(w, f) }
		frame(&pb.RoundFrame{Msg: &pb.RoundFrame_Challenge{Challenge: raw}})
		o, _ := protocol.Open(raw, pb.MessageType_CHALLENGE)
		chain := proof.Chain{ID: protocol.ID(o.Body), Template: pl.Params, Steps: pl.Steps}
		roots := make([][]commit.CV, pl.Steps)
		var flat [][]byte
		for i := range roots {
			for range pl.Params {
				var r commit.CV
				rand.Read(r[:])
				roots[i] = append(roots[i], r)
				flat = append(flat, r[:])
			}
			frame(&pb.RoundFrame{Msg: &pb.RoundFrame_Root{Root: &pb.StepRoot{Step: uint32(i), Roots: flat[len(flat)-len(pl.Params):]}}})
			if i+2 < pl.Steps {
				frame(&pb.RoundFrame{Msg: &pb.RoundFrame_Beacon{Beacon: &pb.Beacon{Step: uint32(i), Beacon: make([]byte, 32)}}})
			}
		}
		cm, _ := protocol.Seal(key, &pb.Commitment{Version: 1, ChallengeId: chain.ID[:], Roots: flat, ComputeMs: 10000})
		frame(&pb.RoundFrame{Msg: &pb.RoundFrame_Commitment{Commitment: cm}})
		frame(&pb.RoundFrame{Msg: &pb.RoundFrame_Result{Result: &pb.RoundResult{Verified: true, Tflops: 590, PeakTflops: 600}}})
		w.Flush()
		reveal, _ := protocol.Seal(key, &pb.Reveal{Version: 1, ChallengeId: chain.ID[:], Secret: pl.Secret[:]})
		idx, err := chain.Sample(pl.Secret, [32]byte(msg.SecretCommitment), roots, pl.Samples)
		if err != nil {
			b.Fatal(err)
		}
		req, _ := protocol.Seal(key, &pb.TileRequest{Version: 1, ChallengeId: chain.ID[:], Secret: pl.Secret[:], Indices: idx})
		resp := &pb.TileResponse{Version: 1, ChallengeId: chain.ID[:]}
		for _, g := range chain.Groups(idx) {
			n, _ := commit.ProofLen(pl.Params[0].Tiles(), g.Tiles)
			resp.Proofs = append(resp.Proofs, make([]byte, 4+32*n))
		}
		head, _ := protocol.Seal(key, resp)
		control = float64(buf.Len() + len(reveal) + len(req) + len(head))
		tiles = float64(len(idx) * (pl.Params[0].TileBytes() + 3))
		total = control + tiles
	}
	b.ReportMetric(total, "bytes/round")
	b.ReportMetric(control, "control-bytes/round")
	b.ReportMetric(tiles, "tile-bytes/round")
}
