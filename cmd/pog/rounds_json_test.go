package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

func testKey(t *testing.T, b byte) (crypto.PrivKey, peer.ID) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	k, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(k)
	return k, id
}

// A `pog rounds --json` row of a two-GPU, two-step round carries what the
// record holds, decoded: step 0's parameter encodings and nonces, the
// committed roots step-major, the sample with its leaves and proofs, and
// the revealed secret, which opens the challenge's H(s).
func TestRoundRowReproducible(t *testing.T) {
	vk, vid := testKey(t, 1)
	mk, mid := testKey(t, 2)
	var secret [32]byte
	secret[3] = 7
	sc := sample.Commit(secret)
	ch := &pb.Challenge{Version: protocol.Version, Epoch: 3, Round: 4, Miner: []byte(mid), SecretCommitment: sc[:], Samples: 5,
		DeadlineMs: 1000, FirstRootMs: 500, Steps: 2}
	cm := &pb.Commitment{Version: protocol.Version}
	var nonces []string
	for i := range 2 {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(mid)}
		p.Nonce[0] = byte(i + 1)
		enc, _ := p.MarshalBinary()
		ch.Params = append(ch.Params, enc)
		nonces = append(nonces, hex.EncodeToString(p.Nonce[:]))
	}
	var roots []string
	for i := range 4 { // 2 steps × 2 sub-challenges
		root := make([]byte, 32)
		root[0] = byte(i)
		cm.Roots = append(cm.Roots, root)
		roots = append(roots, hex.EncodeToString(root))
	}
	chRaw, err := protocol.Seal(vk, ch)
	if err != nil {
		t.Fatal(err)
	}
	o, err := protocol.Open(chRaw, pb.MessageType_CHALLENGE)
	if err != nil {
		t.Fatal(err)
	}
	id := protocol.ID(o.Body)
	cm.ChallengeId = id[:]
	cmRaw, err := protocol.Seal(mk, cm)
	if err != nil {
		t.Fatal(err)
	}
	rec := &store.RoundRecord{Epoch: 3, Round: 4, Miner: []byte(mid), Validator: []byte(vid), Challenge: chRaw, Commitment: cmRaw,
		Secret: secret, Indices: []uint64{1, 9}, Leaves: [][32]byte{{1}, {9}}, Proofs: [][]byte{{0, 0, 0, 0}},
		CommitNanos: 1, Verdict: store.VerdictVerified}

	row := roundRowOf(rec)
	s, err := hex.DecodeString(row.Secret)
	if err != nil || len(s) != 32 {
		t.Fatalf("secret %q", row.Secret)
	}
	if c := sample.Commit([32]byte(s)); hex.EncodeToString(c[:]) != row.SecretCommitment {
		t.Fatalf("H(s) %x, printed %s", c, row.SecretCommitment)
	}
	switch {
	case row.ChallengeID != hex.EncodeToString(id[:]), row.MinerHex != hex.EncodeToString([]byte(mid)), row.Steps != 2:
		t.Fatalf("row %+v", row)
	case !slices.Equal(row.Nonces, nonces) || len(row.Params) != 2 || !slices.Equal(row.Roots, roots):
		t.Fatalf("params %v nonces %v roots %v", row.Params, row.Nonces, row.Roots)
	case !slices.Equal(row.Indices, rec.Indices) || len(row.Leaves) != 2 || row.Leaves[1][:2] != "09" || !slices.Equal(row.BatchProofs, []string{"00000000"}):
		t.Fatalf("sample %v leaves %v proofs %v", row.Indices, row.Leaves, row.BatchProofs)
	}
	for i, enc := range row.Params {
		b, _ := hex.DecodeString(enc)
		if p, err := proof.DecodeParams(b); err != nil || hex.EncodeToString(p.Nonce[:]) != row.Nonces[i] {
			t.Fatalf("params %d do not decode to their nonce: %v", i, err)
		}
	}

	// Before a commitment arrives the secret was never revealed.
	rec.Commitment, rec.CommitNanos, rec.Indices, rec.Leaves, rec.Proofs = nil, 0, nil, nil, nil
	if row := roundRowOf(rec); row.Secret != "" || row.SecretCommitment == "" || len(row.Roots) != 0 {
		t.Fatalf("unrevealed round shows %+v", row)
	}
}
