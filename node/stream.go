package node

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// fetchTiles asks miner for the sampled tiles of one sub-challenge over the
// proof stream. Every read is bounded: the response header by its envelope
// limit, each tile frame by the tile size.
func fetchTiles(ctx context.Context, h host.Host, key crypto.PrivKey, miner peer.ID, id [32]byte, sub uint32,
	secret [32]byte, idx []uint64, tileBytes int) ([][]byte, commit.Proof, error) {
	s, err := h.NewStream(ctx, miner, protocol.ProofProtocol)
	if err != nil {
		return nil, nil, fmt.Errorf("open proof stream: %w", err)
	}
	ok := false
	defer func() {
		if ok {
			s.Close()
		} else {
			s.Reset()
		}
	}()
	if d, has := ctx.Deadline(); has {
		s.SetDeadline(d)
	}
	need := len(idx) * tileBytes
	if err := s.Scope().ReserveMemory(need, network.ReservationPriorityHigh); err != nil {
		return nil, nil, fmt.Errorf("proof stream memory budget: %w", err)
	}
	defer s.Scope().ReleaseMemory(need)
	req, err := protocol.Seal(key, &pb.TileRequest{Version: protocol.Version, ChallengeId: id[:], Sub: sub, Secret: secret[:], Indices: idx})
	if err != nil {
		return nil, nil, err
	}
	if err := protocol.WriteFrame(s, req); err != nil {
		return nil, nil, fmt.Errorf("send tile request: %w", err)
	}
	s.CloseWrite()
	r := bufio.NewReader(s)
	raw, err := protocol.ReadFrame(r, protocol.MaxEnvelope(pb.MessageType_TILE_RESPONSE))
	if err != nil {
		return nil, nil, fmt.Errorf("tile response: %w", err)
	}
	o, err := protocol.Open(raw, pb.MessageType_TILE_RESPONSE)
	if err != nil {
		return nil, nil, fmt.Errorf("tile response: %w", err)
	}
	resp := o.Msg.(*pb.TileResponse)
	switch {
	case o.Author != miner:
		return nil, nil, fmt.Errorf("tile response signed by %s, not the miner", o.Author)
	case resp.Error != "":
		return nil, nil, fmt.Errorf("miner could not serve tiles: %s", resp.Error)
	case [32]byte(resp.ChallengeId) != id || resp.Sub != sub:
		return nil, nil, fmt.Errorf("tile response for another challenge")
	}
	pr, err := commit.DecodeProof(resp.Proof)
	if err != nil {
		return nil, nil, err
	}
	tiles := make([][]byte, len(idx))
	for i := range tiles {
		if tiles[i], err = protocol.ReadFrame(r, tileBytes); err != nil {
			return nil, nil, fmt.Errorf("tile %d of %d: %w", i+1, len(idx), err)
		}
	}
	ok = true
	return tiles, pr, nil
}

// streamDeadline bounds how long a miner spends serving one request.
const streamDeadline = 30 * time.Second
