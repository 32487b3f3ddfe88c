package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// TestBenchJSONReproducible re-derives a bench round from its --json output
// and the output file alone, as an independent implementation would: the
// parameters decode to the printed nonce and miner, the secret opens H(s),
// the indices follow from secret, root and parameters, and the batch proof
// proves the sampled tiles of the output under the root.
func TestBenchJSONReproducible(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.bin")
	code, out, errs := runPog("bench", "--size", "128", "--tile", "1024", "--seed", "s2", "--output", path, "--json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	unhex := func(field, s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s %q: %v", field, s, err)
		}
		return b
	}
	enc := unhex("params", r.Params)
	p, err := proof.DecodeParams(enc)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(p.Nonce[:]) != r.Nonce || hex.EncodeToString(p.Miner) != r.MinerHex {
		t.Fatalf("params carry nonce %x miner %x; printed %s, %s", p.Nonce, p.Miner, r.Nonce, r.MinerHex)
	}
	if id, err := peer.IDFromBytes(p.Miner); err != nil || id.String() != r.Miner {
		t.Fatalf("miner bytes are not the peer ID %s: %v", r.Miner, err)
	}
	secret, root := [32]byte(unhex("secret", r.Secret)), commit.CV(unhex("root", r.Root))
	if c := sample.Commit(secret); hex.EncodeToString(c[:]) != r.SecretCommitment {
		t.Fatalf("H(secret) = %x, printed %s", c, r.SecretCommitment)
	}
	idx := sample.Indices(secret, root, enc, p.Tiles(), r.Samples)
	if !slices.Equal(idx, r.Indices) || len(idx) != r.Samples {
		t.Fatalf("indices %v, printed %v", idx, r.Indices)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([]commit.CV, len(idx))
	for i, x := range idx {
		leaves[i] = commit.TileCV(data[x*uint64(p.TileBytes()):][:p.TileBytes()], x)
	}
	pr, err := commit.DecodeProof(unhex("batch_proof", r.BatchProof))
	if err != nil {
		t.Fatal(err)
	}
	if err := commit.Verify(root, p.Tiles(), idx, leaves, pr); err != nil {
		t.Fatalf("printed batch proof: %v", err)
	}
}
