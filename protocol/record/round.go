package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/pog-network/pog/proof/commit"
)

// Verdict is the outcome of one round for one miner. The zero value is
// invalid.
type Verdict uint8

// Verdicts.
const (
	VerdictVerified Verdict = 1
	VerdictFailed   Verdict = 2
)

func (v Verdict) String() string {
	switch v {
	case VerdictVerified:
		return "verified"
	case VerdictFailed:
		return "failed"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// TileVerdict is the check of one sampled output tile.
type TileVerdict struct {
	Index  uint64
	OK     bool
	Reason string // why the tile failed (<= 1 KiB); empty if OK
}

// Round is one validator's evidence for one miner in one round.
type Round struct {
	Epoch, Round uint64
	Miner        []byte        // miner libp2p peer ID bytes (1..64)
	Validator    []byte        // validator peer ID bytes (1..64)
	Challenge    []byte        // the signed challenge envelope, as sent (1 B .. 64 KiB)
	Commitment   []byte        // the signed commitment envelope, as received; empty if none arrived (<= 64 KiB)
	Secret       [32]byte      // the revealed sampling secret
	Indices      []uint64      // sampled tile indices (<= 4096)
	Tiles        []TileVerdict // per sampled tile (<= 4096)
	SentUnixNano int64         // validator wall clock when the challenge was sent (display only)
	CommitNanos  int64         // send -> commitment receipt on the validator's monotonic clock; 0 if none
	VerifyNanos  int64         // time the validator spent verifying (>= 0)
	FLOPs        float64       // the challenge's work
	TFLOPS       float64       // sustained: steps 1..D−1 over first to last root arrival (SPEC §10), 0 if failed
	Verdict      Verdict
	Reason       string // why it failed (1 B .. 4 KiB); empty if verified

	// Evidence for audits; both optional (records written before they
	// existed have neither).

	// Proofs holds one batch inclusion proof per (step, sub-challenge)
	// group of the sample, in order (proof.Chain.Groups), each in the
	// commit.Proof binary encoding (BE32 count ‖ 32·count bytes), at most
	// MaxProofs of them and MaxProofsLen bytes together.
	Proofs [][]byte
	// Leaves holds the chaining values of the sampled tiles, in the order of
	// Indices: none, or exactly one per index.
	Leaves [][32]byte

	// Timing evidence of a chained round (SPEC.md §10); absent in records
	// written before chained rounds.

	// StepArrivals holds each step root's arrival after the challenge was
	// sent, on the validator's monotonic clock, in step order (≥ 0, at
	// most MaxSteps).
	StepArrivals []int64
	RTTNanos     int64   // round trip by libp2p ping on the round's connection (≥ 0)
	PeakTFLOPS   float64 // fastest window of steps; 0 if failed

	// BadTile is a failed round's evidence of a wrong tile (SPEC.md §22.2):
	// the bytes the miner served for the first sampled tile that was in
	// its committed root but failed the exactness check. Nil otherwise.
	BadTile *TileData
}

// TileData is one sampled tile as the miner served it.
type TileData struct {
	Index uint64 // global index, one of the record's Indices
	Data  []byte // serialised tile (1..MaxTileBytes bytes)
}

// Bounds on a record. They let the decoder refuse a hostile length before
// allocating for it. Without proofs a value stays under about 4.4 MiB; the
// proofs together are bounded like one proof of commit.DecodeProof (which
// opens at most MaxSamples tiles), so that any sample the protocol accepts
// can be kept, and put the worst case near 13 MiB (real proofs are far
// smaller); a bad tile adds at most 1 MiB. MaxRoundLen bounds any valid
// record's encoding.
const (
	MaxPeerIDLen     = 64
	MaxEnvelopeLen   = 64 << 10
	MaxSamples       = 4096 // indices, tiles and leaves each
	MaxTileReasonLen = 1 << 10
	MaxReasonLen     = 4 << 10
	MaxProofs        = MaxSamples                    // one per sampled group at most
	MaxProofLen      = 4 + 32*commit.MaxProofCVs     // one encoded proof
	MaxProofsLen     = MaxProofLen + 4*(MaxProofs-1) // all of them
	MaxSteps         = 256                           // proof.MaxSteps
	MaxTileBytes     = 4 * 512 * 512                 // 4·proof.MaxTile²
	MaxRoundLen      = 16 << 20
)

// Validate checks the bounds and the few invariants every reader relies on.
// It runs before a write and after every decode, so a stored record always
// satisfies it.
func (r *Round) Validate() error {
	for _, check := range [...]func() error{r.validateEnvelopes, r.validateSample, r.validateTiming,
		r.validateProofs, r.validateChain, r.validateBadTile, r.validateVerdict} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateEnvelopes bounds the peer IDs and the round's two envelopes.
func (r *Round) validateEnvelopes() error {
	if n := len(r.Miner); n < 1 || n > MaxPeerIDLen {
		return fmt.Errorf("miner: %d bytes, want 1..%d", n, MaxPeerIDLen)
	}
	if n := len(r.Validator); n < 1 || n > MaxPeerIDLen {
		return fmt.Errorf("validator: %d bytes, want 1..%d", n, MaxPeerIDLen)
	}
	if n := len(r.Challenge); n < 1 || n > MaxEnvelopeLen {
		return fmt.Errorf("challenge: %d bytes, want 1..%d", n, MaxEnvelopeLen)
	}
	if n := len(r.Commitment); n > MaxEnvelopeLen {
		return fmt.Errorf("commitment: %d bytes, want at most %d", n, MaxEnvelopeLen)
	}
	return nil
}

// validateSample bounds the sampled indices, their verdicts and leaves.
func (r *Round) validateSample() error {
	if n := len(r.Indices); n > MaxSamples {
		return fmt.Errorf("indices: %d, want at most %d", n, MaxSamples)
	}
	if n := len(r.Tiles); n > MaxSamples {
		return fmt.Errorf("tiles: %d, want at most %d", n, MaxSamples)
	}
	for i, t := range r.Tiles {
		if n := len(t.Reason); n > MaxTileReasonLen {
			return fmt.Errorf("tiles[%d].reason: %d bytes, want at most %d", i, n, MaxTileReasonLen)
		}
	}
	if n := len(r.Leaves); n != 0 && n != len(r.Indices) {
		return fmt.Errorf("leaves: %d for %d indices, want none or one per index", n, len(r.Indices))
	}
	return nil
}

// validateTiming checks the durations and rates: no negative duration, a
// commitment time only with a commitment, every rate finite and >= +0.
func (r *Round) validateTiming() error {
	if r.CommitNanos < 0 {
		return fmt.Errorf("commit nanos: %d is negative", r.CommitNanos)
	}
	if len(r.Commitment) == 0 && r.CommitNanos != 0 {
		return fmt.Errorf("commit nanos: %d without a commitment, want 0", r.CommitNanos)
	}
	if r.VerifyNanos < 0 {
		return fmt.Errorf("verify nanos: %d is negative", r.VerifyNanos)
	}
	if !validRate(r.FLOPs) {
		return fmt.Errorf("flops: %v, want a finite value >= +0", r.FLOPs)
	}
	if !validRate(r.TFLOPS) {
		return fmt.Errorf("tflops: %v, want a finite value >= +0", r.TFLOPS)
	}
	if n := len(r.Reason); n > MaxReasonLen {
		return fmt.Errorf("reason: %d bytes, want at most %d", n, MaxReasonLen)
	}
	return nil
}

// validateProofs checks the proofs' count, framing and joint size.
func (r *Round) validateProofs() error {
	if n := len(r.Proofs); n > MaxProofs {
		return fmt.Errorf("proofs: %d, want at most %d", n, MaxProofs)
	}
	total := 0
	for i, p := range r.Proofs {
		if err := checkProof(p); err != nil {
			return fmt.Errorf("proofs[%d]: %w", i, err)
		}
		total += len(p)
	}
	if total > MaxProofsLen {
		return fmt.Errorf("proofs: %d bytes together, want at most %d", total, MaxProofsLen)
	}
	return nil
}

// validateChain checks a chained round's timing evidence: step arrivals in
// order and never negative, a round trip >= 0, a valid peak rate.
func (r *Round) validateChain() error {
	if n := len(r.StepArrivals); n > MaxSteps {
		return fmt.Errorf("step arrivals: %d, want at most %d", n, MaxSteps)
	}
	for i, a := range r.StepArrivals {
		if a < 0 || i > 0 && a < r.StepArrivals[i-1] {
			return fmt.Errorf("step arrivals: %d at step %d is negative or earlier than the step before", a, i)
		}
	}
	if r.RTTNanos < 0 {
		return fmt.Errorf("rtt nanos: %d is negative", r.RTTNanos)
	}
	if !validRate(r.PeakTFLOPS) {
		return fmt.Errorf("peak tflops: %v, want a finite value >= +0", r.PeakTFLOPS)
	}
	return nil
}

// validateVerdict: a verified round has a commitment and no reason; a
// failed one has a reason and no rate.
func (r *Round) validateVerdict() error {
	switch r.Verdict {
	case VerdictVerified:
		if r.Reason != "" {
			return fmt.Errorf("reason: %q on a verified round, want none", r.Reason)
		}
		if len(r.Commitment) == 0 {
			return fmt.Errorf("commitment: none on a verified round")
		}
	case VerdictFailed:
		if r.Reason == "" {
			return fmt.Errorf("reason: none on a failed round")
		}
		if r.TFLOPS != 0 || r.PeakTFLOPS != 0 {
			return fmt.Errorf("tflops: %v (peak %v) on a failed round, want 0", r.TFLOPS, r.PeakTFLOPS)
		}
	default:
		return fmt.Errorf("verdict: %d, want %d (verified) or %d (failed)", r.Verdict, VerdictVerified, VerdictFailed)
	}
	return nil
}

// validateBadTile: a bad tile is kept only by a failed round, for one of
// its sampled indices.
func (r *Round) validateBadTile() error {
	t := r.BadTile
	switch {
	case t == nil:
		return nil
	case r.Verdict != VerdictFailed:
		return fmt.Errorf("bad tile: on a round that did not fail")
	case len(t.Data) < 1 || len(t.Data) > MaxTileBytes:
		return fmt.Errorf("bad tile: %d bytes, want 1..%d", len(t.Data), MaxTileBytes)
	case !slices.Contains(r.Indices, t.Index):
		return fmt.Errorf("bad tile: index %d is not sampled", t.Index)
	}
	return nil
}

// checkProof checks the framing of an encoded commit.Proof (as
// commit.DecodeProof does, without allocating): a count, then exactly that
// many chaining values.
func checkProof(p []byte) error {
	if len(p) < 4 || len(p) > MaxProofLen {
		return fmt.Errorf("%d bytes, want 4..%d", len(p), MaxProofLen)
	}
	if n := binary.BigEndian.Uint32(p); uint64(len(p)-4) != 32*uint64(n) {
		return fmt.Errorf("%d bytes of chaining values for a count of %d", len(p)-4, n)
	}
	return nil
}

// validRate rejects NaN, infinities, negatives and -0; -0 would be the one
// float whose encoding (non-zero bits) differs from that of its equal, +0.
func validRate(f float64) bool {
	return f >= 0 && !math.IsInf(f, 1) && !math.Signbit(f)
}
