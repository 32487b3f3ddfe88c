package proof

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/internal/specvec"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// vectorMiner is the miner of the SPEC §12 vectors: the peer ID multihash
// bytes (§2) of the Ed25519 key whose seed is the bytes 00 01 … 1f, built by
// hand as SPEC §12 describes: identity multihash (00, length 36) of the
// protobuf public key (08 01 = Ed25519, 12 20 = 32 bytes of key).
func vectorMiner() []byte {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	return append([]byte{0x00, 0x24, 0x08, 0x01, 0x12, 0x20}, pub...)
}

// The hand-built bytes are the peer ID libp2p derives from that key.
func TestVectorMinerIsPeerID(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	k, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if string(vectorMiner()) != string(id) {
		t.Fatalf("vector miner %x, libp2p's peer ID %x", vectorMiner(), []byte(id))
	}
}

// TestSpecRoundVectors regenerates SPEC §12.2's round vectors (the fp16
// challenge of §12.1 with a revealed secret: H(s), the sampled indices, a
// Freivalds vector and the batch proof) and compares them with the SPEC
// text, then checks that the honest tiles verify under that transcript.
func TestSpecRoundVectors(t *testing.T) {
	p := Params{Precision: FP16, Batch: 2, M: 32, K: 20, N: 48, Tile: 16, Miner: vectorMiner()}
	for i := range p.Nonce {
		p.Nonce[i] = byte(i)
	}
	enc, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	data := honestOutput(t, p)
	leaves, err := commit.TileCVs(data, p.TileBytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	root, err := commit.Root(leaves)
	if err != nil {
		t.Fatal(err)
	}
	var s [32]byte
	for i := range s {
		s[i] = byte(0x20 + i)
	}
	const k = 4
	tr := Transcript{Params: p, SecretCommitment: sample.Commit(s), Root: root, Secret: s, Samples: k}
	idx, err := tr.Indices()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := commit.Prove(leaves, idx)
	if err != nil {
		t.Fatal(err)
	}
	prb, _ := pr.MarshalBinary()
	var b strings.Builder
	fmt.Fprintf(&b, "miner=%s\nminer bytes=%x\nparams=%x\ntiles=%d root=%x\n", peer.ID(p.Miner), p.Miner, enc, p.Tiles(), root)
	fmt.Fprintf(&b, "s=%x\nH(s)=%x\nk=%d indices=%v\n", s, tr.SecretCommitment, k, idx)
	fmt.Fprintf(&b, "r(tile %d)=%v\n", idx[0], tr.freivaldsVector(idx[0]))
	fmt.Fprintf(&b, "batch proof (%d values)=%x\n", len(pr), prb)
	got := strings.TrimSuffix(b.String(), "\n")
	want, err := specvec.Block(specvec.Path(), "round")
	if err != nil {
		t.Fatalf("%v; the code gives:\n%s", err, got)
	}
	if got != strings.Join(want, "\n") {
		t.Fatalf("SPEC §12.2 round vectors differ from the code's:\n%s", got)
	}
	tiles := make([][]byte, len(idx))
	for i, x := range idx {
		tiles[i] = data[x*uint64(p.TileBytes()):][:p.TileBytes()]
	}
	if err := tr.Verify(tiles, pr, nil); err != nil {
		t.Fatalf("the vector's honest tiles do not verify: %v", err)
	}
}
