package main

import (
	"crypto/ed25519"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
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

// A `pog rounds --json` row of a two-GPU round carries, per sub-challenge,
// the parameter encoding, nonce, root and sample, and the revealed secret:
// from them alone H(s) and every index re-derive.
func TestRoundRowReproducible(t *testing.T) {
	vk, vid := testKey(t, 1)
	mk, mid := testKey(t, 2)
	var secret [32]byte
	secret[3] = 7
	sc := sample.Commit(secret)
	ch := &pb.Challenge{Version: protocol.Version, Epoch: 3, Round: 4, Miner: []byte(mid), SecretCommitment: sc[:], Samples: 5, DeadlineMs: 1000}
	cm := &pb.Commitment{Version: protocol.Version}
	var all []uint64
	var proofs [][]byte
	var cvs [][32]byte
	for i := range 2 {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(mid)}
		p.Nonce[0] = byte(i + 1)
		enc, _ := p.MarshalBinary()
		ch.Params = append(ch.Params, enc)
		leaves := make([]commit.CV, p.Tiles())
		for j := range leaves {
			leaves[j][0], leaves[j][1] = byte(j), byte(i)
		}
		root, _ := commit.Root(leaves)
		cm.Roots = append(cm.Roots, root[:])
		idx := sample.Indices(secret, root, enc, p.Tiles(), 5)
		all = append(all, idx...)
		pr, _ := commit.Prove(leaves, idx)
		prb, _ := pr.MarshalBinary()
		proofs = append(proofs, prb)
		for _, x := range idx {
			cvs = append(cvs, [32]byte(leaves[x]))
		}
	}
	chRaw, err := protocol.Seal(vk, ch)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := protocol.Open(chRaw, pb.MessageType_CHALLENGE)
	id := protocol.ID(o.Body)
	cm.ChallengeId = id[:]
	cmRaw, err := protocol.Seal(mk, cm)
	if err != nil {
		t.Fatal(err)
	}
	rec := &store.RoundRecord{Epoch: 3, Round: 4, Miner: []byte(mid), Validator: []byte(vid), Challenge: chRaw, Commitment: cmRaw,
		Secret: secret, Indices: all, Proofs: proofs, Leaves: cvs, CommitNanos: 1, Verdict: store.VerdictVerified}

	row := roundRowOf(rec)
	s, err := hex.DecodeString(row.Secret)
	if err != nil || len(s) != 32 {
		t.Fatalf("secret %q", row.Secret)
	}
	if c := sample.Commit([32]byte(s)); hex.EncodeToString(c[:]) != row.SecretCommitment {
		t.Fatalf("H(s) %x, printed %s", c, row.SecretCommitment)
	}
	if row.ChallengeID != hex.EncodeToString(id[:]) || row.MinerHex != hex.EncodeToString([]byte(mid)) || len(row.Subs) != 2 {
		t.Fatalf("row %+v", row)
	}
	for i, sub := range row.Subs {
		enc, _ := hex.DecodeString(sub.Params)
		p, err := proof.DecodeParams(enc)
		if err != nil || hex.EncodeToString(p.Nonce[:]) != sub.Nonce {
			t.Fatalf("sub %d: params %s nonce %s: %v", i, sub.Params, sub.Nonce, err)
		}
		root, _ := hex.DecodeString(sub.Root)
		if want := sample.Indices([32]byte(s), [32]byte(root), enc, p.Tiles(), row.Samples/2); !slices.Equal(sub.Indices, want) {
			t.Fatalf("sub %d: indices %v, re-derived %v", i, sub.Indices, want)
		}
		var ls []commit.CV
		for _, l := range sub.Leaves {
			b, _ := hex.DecodeString(l)
			ls = append(ls, commit.CV(b))
		}
		prb, _ := hex.DecodeString(sub.BatchProof)
		pr, err := commit.DecodeProof(prb)
		if err != nil {
			t.Fatalf("sub %d: batch proof: %v", i, err)
		}
		if err := commit.Verify(commit.CV(root), p.Tiles(), sub.Indices, ls, pr); err != nil {
			t.Fatalf("sub %d: printed leaves and proof do not verify: %v", i, err)
		}
	}

	// Before a commitment arrives the secret was never revealed.
	rec.Commitment, rec.CommitNanos, rec.Indices, rec.Leaves, rec.Proofs = nil, 0, nil, nil, nil
	if row := roundRowOf(rec); row.Secret != "" || row.SecretCommitment == "" || row.Subs[0].Root != "" {
		t.Fatalf("unrevealed round shows %+v", row)
	}
}
