// Package recordtest builds valid records for tests of the record
// encodings and of what stores them.
package recordtest

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record"
)

// Round returns a valid, fully populated verified round for the key.
func Round(epoch, round uint64, miner string) *record.Round {
	r := &record.Round{
		Epoch:        epoch,
		Round:        round,
		Miner:        []byte(miner),
		Validator:    []byte("validator-1"),
		Challenge:    []byte("signed challenge envelope"),
		Commitment:   []byte("signed commitment envelope"),
		Indices:      []uint64{0, 7, 1 << 40, math.MaxUint64},
		Tiles:        []record.TileVerdict{{Index: 0, OK: true}, {Index: 7, Reason: "freivalds mismatch"}, {}},
		SentUnixNano: -5,
		CommitNanos:  1_500_000_000,
		VerifyNanos:  3_000_000,
		FLOPs:        2 * 8192 * 8192 * 8192,
		TFLOPS:       733.0,
		Verdict:      record.VerdictVerified,
	}
	for i := range r.Secret {
		r.Secret[i] = byte(i + 1)
	}
	return r
}

// Failed is Round failed: no commitment arrived.
func Failed(epoch, round uint64, miner string) *record.Round {
	r := Round(epoch, round, miner)
	r.Commitment, r.CommitNanos, r.TFLOPS = nil, 0, 0
	r.Verdict, r.Reason = record.VerdictFailed, "no commitment before the deadline"
	return r
}

// Proof returns an encoded commit.Proof of n chaining values.
func Proof(n int) []byte {
	p := binary.BigEndian.AppendUint32(make([]byte, 0, 4+32*n), uint32(n))
	for i := range 32 * n {
		p = append(p, byte(i*7+n))
	}
	return p
}

// Leaves returns n distinct chaining values.
func Leaves(n int) [][32]byte {
	l := make([][32]byte, n)
	for i := range l {
		binary.BigEndian.PutUint64(l[i][:], uint64(i)+1)
		l[i][31] = 0xcc
	}
	return l
}

// Audit is Round with the audit evidence: proofs and leaves.
func Audit(epoch, round uint64, miner string) *record.Round {
	r := Round(epoch, round, miner)
	r.Proofs = [][]byte{Proof(3), Proof(0), Proof(1)}
	r.Leaves = Leaves(len(r.Indices))
	return r
}

// Chained has a chained round's timing evidence.
func Chained() *record.Round {
	r := Audit(4, 2, "miner")
	r.StepArrivals, r.RTTNanos, r.PeakTFLOPS = []int64{0, 10, 10, 1 << 40}, 400_000_000, 801.5
	return r
}

// BadTile is a failed round keeping the bytes of sampled tile idx.
func BadTile(idx uint64) *record.Round {
	r := Audit(2, 3, "miner")
	r.TFLOPS, r.Verdict, r.Reason = 0, record.VerdictFailed, "tile 7: tile values are not A·B"
	r.BadTile = &record.TileData{Index: idx, Data: []byte{1, 2, 3, 4}}
	return r
}

// Max has every field at its bound, except that only its last proof is as
// long as a proof may be (all of them would make a 128 MiB value).
func Max() *record.Round {
	r := Round(math.MaxUint64, math.MaxUint64, strings.Repeat("m", record.MaxPeerIDLen))
	r.Validator = bytes.Repeat([]byte{'v'}, record.MaxPeerIDLen)
	r.Challenge = bytes.Repeat([]byte{'c'}, record.MaxEnvelopeLen)
	r.Commitment = bytes.Repeat([]byte{'k'}, record.MaxEnvelopeLen)
	r.Indices = make([]uint64, record.MaxSamples)
	r.Tiles = make([]record.TileVerdict, record.MaxSamples)
	for i := range r.Indices {
		r.Indices[i] = math.MaxUint64 - uint64(i)
		r.Tiles[i] = record.TileVerdict{Index: math.MaxUint64, OK: true, Reason: strings.Repeat("t", record.MaxTileReasonLen)}
	}
	r.SentUnixNano, r.CommitNanos, r.VerifyNanos = math.MinInt64, math.MaxInt64, math.MaxInt64
	r.FLOPs = math.MaxFloat64
	r.TFLOPS = 0
	r.Verdict, r.Reason = record.VerdictFailed, strings.Repeat("r", record.MaxReasonLen)
	r.Proofs = make([][]byte, record.MaxProofs)
	for i := range r.Proofs {
		r.Proofs[i] = Proof(0)
	}
	r.Proofs[record.MaxProofs-1] = Proof(commit.MaxProofCVs)
	r.Leaves = Leaves(record.MaxSamples)
	return r
}

// Host returns a valid verified host record for the key.
func Host(epoch, round uint64, miner string) *record.Host {
	r := &record.Host{Epoch: epoch, Round: round, Miner: []byte(miner), Validator: []byte("validator"),
		Challenge: []byte{1, 2, 3}, RTTNanos: 1000, RootNanos: 5e6, Opening: []byte{4, 5}, VerifyNanos: 77,
		Verdict: record.VerdictVerified}
	r.Secret[0], r.Root[31] = 9, 8
	return r
}

// EpochRecord signs an epoch record of weights over miners, linked to
// prev, and returns its envelope and ID.
func EpochRecord(key crypto.PrivKey, e uint64, prev [32]byte, weights map[peer.ID]float64) ([]byte, [32]byte, error) {
	rec := &pb.EpochRecord{Version: protocol.Version, Epoch: e, RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: prev[:]}
	for m, w := range weights {
		rec.Weights = append(rec.Weights, &pb.MinerWeight{Miner: []byte(m), Weight: w})
	}
	slices.SortFunc(rec.Weights, func(a, b *pb.MinerWeight) int { return bytes.Compare(a.Miner, b.Miner) })
	raw, err := protocol.Seal(key, rec)
	if err != nil {
		return nil, [32]byte{}, err
	}
	o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		return nil, [32]byte{}, err
	}
	return raw, protocol.ID(o.Body), nil
}
