package epoch

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// TestBoundWeightsKeepsTheWeighed scores more miners than a record may
// hold: the record keeps the MaxEpochMiners highest weights (every
// positive one here, the zeros of the lowest IDs after them), in miner
// order, and verifies.
func TestBoundWeightsKeepsTheWeighed(t *testing.T) {
	const positive, zeros = 3000, 2000
	var ws []*pb.MinerWeight
	for i := range positive + zeros {
		k, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		id, _ := peer.IDFromPrivateKey(k)
		w := 0.0
		if i < positive {
			w = 1.0 / positive
		}
		ws = append(ws, &pb.MinerWeight{Miner: []byte(id), Weight: w})
	}
	got := boundWeights(ws)
	if len(got) != protocol.MaxEpochMiners {
		t.Fatalf("kept %d weights, want %d", len(got), protocol.MaxEpochMiners)
	}
	n := 0
	for i, w := range got {
		if w.Weight > 0 {
			n++
		}
		if i > 0 && bytes.Compare(got[i-1].Miner, w.Miner) >= 0 {
			t.Fatal("weights not in miner order")
		}
	}
	if n != positive {
		t.Fatalf("kept %d positive weights, want %d", n, positive)
	}
	key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	rec := &pb.EpochRecord{Version: protocol.Version, Epoch: 1, Weights: got, RoundsRoot: make([]byte, 32),
		ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)}
	raw, err := protocol.Seal(key, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD); err != nil {
		t.Fatal(fmt.Errorf("bounded record does not verify: %w", err))
	}
}
