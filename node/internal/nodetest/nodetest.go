// Package nodetest holds the keys, stores, records and fixed generator the
// tests of node and its packages share.
package nodetest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record/recordtest"
	"github.com/pog-network/pog/store"
)

// SplitMix64 is a fixed generator, so the inputs do not depend on
// math/rand's algorithms.
type SplitMix64 uint64

// Next is the generator's next output.
func (s *SplitMix64) Next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Unit is uniform in [0, 1) with 53 random bits.
func (s *SplitMix64) Unit() float64 { return float64(s.Next()>>11) / (1 << 53) }

// SeededKey is an Ed25519 key from a fixed seed (Ed25519 signatures are
// deterministic, so the sealed bytes are too).
func SeededKey(t testing.TB, i byte) (crypto.PrivKey, peer.ID) {
	seed := bytes.Repeat([]byte{i}, ed25519.SeedSize)
	k, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, id
}

// Peer is the ID of a fresh random key.
func Peer(t testing.TB) peer.ID {
	_, id := Key(t)
	return id
}

// Key is a fresh random Ed25519 key and its peer ID.
func Key(t testing.TB) (crypto.PrivKey, peer.ID) {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(k)
	return k, id
}

// EpochRecord signs an epoch record of weights over miners, linked to prev.
func EpochRecord(t testing.TB, key crypto.PrivKey, e uint64, prev [32]byte, weights map[peer.ID]float64) ([]byte, [32]byte) {
	t.Helper()
	raw, id, err := recordtest.EpochRecord(key, e, prev, weights)
	if err != nil {
		t.Fatal(err)
	}
	return raw, id
}

// MemStore is an empty in-memory store, closed when the test ends.
func MemStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// GoldenRound is one round record: mostly verified, at fp16 or fp32, with
// an irregular TFLOPS figure; one in nine failed.
func GoldenRound(t testing.TB, rng *SplitMix64, vk crypto.PrivKey, v, m peer.ID, e, r uint64) *store.RoundRecord {
	prec := proof.FP16
	if rng.Next()%3 == 0 {
		prec = proof.FP32
	}
	p := proof.Params{Precision: prec, Batch: uint32(1 + rng.Next()%4), M: 256, K: 256, N: 512, Tile: 64, Miner: []byte(m)}
	binary.LittleEndian.PutUint64(p.Nonce[:], rng.Next())
	pb1, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ch, err := protocol.Seal(vk, &pb.Challenge{Version: protocol.Version, Epoch: e, Round: r, Miner: []byte(m),
		Params: [][]byte{pb1}, SecretCommitment: make([]byte, 32), Samples: 4, DeadlineMs: 5000})
	if err != nil {
		t.Fatal(err)
	}
	rec := &store.RoundRecord{Epoch: e, Round: r, Miner: []byte(m), Validator: []byte(v), Challenge: ch,
		Commitment: []byte{1}, CommitNanos: int64(1 + rng.Next()%1e9), FLOPs: p.FLOPs(), Verdict: store.VerdictVerified}
	if rng.Next()%9 == 0 {
		rec.Verdict, rec.Reason = store.VerdictFailed, "golden failure"
	} else {
		rec.TFLOPS = 2000 * rng.Unit()
	}
	return rec
}
