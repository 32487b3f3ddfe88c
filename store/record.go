package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/pog-network/pog/proof/commit"
	"google.golang.org/protobuf/encoding/protowire"
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

// RoundRecord is one validator's evidence for one miner in one round.
type RoundRecord struct {
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

// validate checks the bounds and the few invariants every reader relies on.
// It runs before a write and after every decode, so a stored record always
// satisfies it.
func (r *RoundRecord) validate() error {
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
	if n := len(r.Leaves); n != 0 && n != len(r.Indices) {
		return fmt.Errorf("leaves: %d for %d indices, want none or one per index", n, len(r.Indices))
	}
	if err := r.validateBadTile(); err != nil {
		return err
	}
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
func (r *RoundRecord) validateBadTile() error {
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

// Value encoding, format 1: one format byte (formatV1), then protobuf wire
// format. Field numbers (wire type):
//
//	 1 epoch           varint
//	 2 round           varint
//	 3 miner           bytes
//	 4 validator       bytes
//	 5 challenge       bytes
//	 6 commitment      bytes
//	 7 secret          bytes, exactly 32
//	 8 indices         bytes: packed varints
//	 9 tiles           bytes: a TileVerdict message, repeated once per tile
//	10 sent_unix_nano  varint, zigzag (sint64)
//	11 commit_nanos    varint, zigzag
//	12 verify_nanos    varint, zigzag
//	13 flops           fixed64, IEEE 754 bits
//	14 tflops          fixed64
//	15 verdict         varint
//	16 reason          bytes
//	17 proofs          bytes: one encoded commit.Proof, repeated once per proof
//	18 leaves          bytes: the 32-byte chaining values, concatenated
//	19 step_arrivals   bytes: packed varints (non-negative nanoseconds)
//	20 rtt_nanos       varint, zigzag
//	21 peak_tflops     fixed64
//	22 bad_tile        bytes: a TileData message
//
// TileVerdict: 1 index varint, 2 ok varint (1), 3 reason bytes.
// TileData: 1 index varint, 2 data bytes (never empty).
//
// The encoding is canonical, so equal records have equal bytes and a stored
// value can be hashed or compared as evidence: fields appear in increasing
// number order (only fields 9 and 17 repeat), a field is present exactly
// when its value is not the zero value (a proof, never empty, is always
// present), and varints are minimal. The decoder rejects anything else,
// including unknown fields, so a reader never silently drops what it does
// not know. Fields 17 and 18 were added to format 1 as optional fields: a
// record without them reads as before, and a reader that predates them
// refuses a record that has them (as corrupt) rather than misreading it.
// Fields 19 to 21 (chained rounds) and 22 (failure evidence) were added the
// same way.
const formatV1 = 1

const (
	fEpoch protowire.Number = 1 + iota
	fRound
	fMiner
	fValidator
	fChallenge
	fCommitment
	fSecret
	fIndices
	fTiles
	fSentUnixNano
	fCommitNanos
	fVerifyNanos
	fFLOPs
	fTFLOPS
	fVerdict
	fReason
	fProofs
	fLeaves
	fStepArrivals
	fRTTNanos
	fPeakTFLOPS
	fBadTile
)

const (
	fTileIndex protowire.Number = 1 + iota
	fTileOK
	fTileReason
)

// TileData fields.
const (
	fDataIndex protowire.Number = 1 + iota
	fDataBytes
)

// maxTileMsgLen is the longest encoded TileVerdict: index, ok and a
// reason of MaxTileReasonLen bytes.
var maxTileMsgLen = protowire.SizeTag(fTileIndex) + protowire.SizeVarint(math.MaxUint64) +
	protowire.SizeTag(fTileOK) + 1 +
	protowire.SizeTag(fTileReason) + protowire.SizeBytes(MaxTileReasonLen)

// maxBadTileMsgLen is the longest encoded TileData.
var maxBadTileMsgLen = protowire.SizeTag(fDataIndex) + protowire.SizeVarint(math.MaxUint64) +
	protowire.SizeTag(fDataBytes) + protowire.SizeBytes(MaxTileBytes)

// encodeRound returns the canonical value encoding of r, which must be valid.
func encodeRound(r *RoundRecord) []byte {
	n := 128 + len(r.Miner) + len(r.Validator) + len(r.Challenge) + len(r.Commitment) +
		10*len(r.Indices) + 16*len(r.Tiles) + len(r.Reason) + 32*len(r.Leaves)
	for _, t := range r.Tiles {
		n += len(t.Reason)
	}
	for _, p := range r.Proofs {
		n += 8 + len(p)
	}
	if r.BadTile != nil {
		n += 24 + len(r.BadTile.Data)
	}
	b := make([]byte, 1, n)
	b[0] = formatV1
	b = appendVarint(b, fEpoch, r.Epoch)
	b = appendVarint(b, fRound, r.Round)
	b = appendBytes(b, fMiner, r.Miner)
	b = appendBytes(b, fValidator, r.Validator)
	b = appendBytes(b, fChallenge, r.Challenge)
	b = appendBytes(b, fCommitment, r.Commitment)
	if r.Secret != [32]byte{} {
		b = appendBytes(b, fSecret, r.Secret[:])
	}
	if len(r.Indices) > 0 {
		var packed []byte
		for _, x := range r.Indices {
			packed = protowire.AppendVarint(packed, x)
		}
		b = appendBytes(b, fIndices, packed)
	}
	for _, t := range r.Tiles {
		var m []byte
		m = appendVarint(m, fTileIndex, t.Index)
		if t.OK {
			m = appendVarint(m, fTileOK, 1)
		}
		m = appendBytes(m, fTileReason, []byte(t.Reason))
		b = protowire.AppendTag(b, fTiles, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	b = appendVarint(b, fSentUnixNano, protowire.EncodeZigZag(r.SentUnixNano))
	b = appendVarint(b, fCommitNanos, protowire.EncodeZigZag(r.CommitNanos))
	b = appendVarint(b, fVerifyNanos, protowire.EncodeZigZag(r.VerifyNanos))
	b = appendFixed64(b, fFLOPs, math.Float64bits(r.FLOPs))
	b = appendFixed64(b, fTFLOPS, math.Float64bits(r.TFLOPS))
	b = appendVarint(b, fVerdict, uint64(r.Verdict))
	b = appendBytes(b, fReason, []byte(r.Reason))
	for _, p := range r.Proofs {
		b = appendBytes(b, fProofs, p) // never empty in a valid record
	}
	if len(r.Leaves) > 0 {
		leaves := make([]byte, 0, 32*len(r.Leaves))
		for _, l := range r.Leaves {
			leaves = append(leaves, l[:]...)
		}
		b = appendBytes(b, fLeaves, leaves)
	}
	if len(r.StepArrivals) > 0 {
		var packed []byte
		for _, a := range r.StepArrivals {
			packed = protowire.AppendVarint(packed, uint64(a))
		}
		b = appendBytes(b, fStepArrivals, packed)
	}
	b = appendVarint(b, fRTTNanos, protowire.EncodeZigZag(r.RTTNanos))
	b = appendFixed64(b, fPeakTFLOPS, math.Float64bits(r.PeakTFLOPS))
	if t := r.BadTile; t != nil {
		m := appendVarint(nil, fDataIndex, t.Index)
		m = appendBytes(m, fDataBytes, t.Data)
		b = appendBytes(b, fBadTile, m)
	}
	return b
}

// The append helpers omit zero values, as the canonical form requires.

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// decodeRound parses a value written by encodeRound. The bytes come from
// disk and may be anything: every length is checked against its bound before
// anything is allocated for it, and the result is validated.
func decodeRound(b []byte) (*RoundRecord, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty value")
	}
	if b[0] != formatV1 {
		return nil, fmt.Errorf("unknown format version %d", b[0])
	}
	d := decoder{b: b[1:]}
	r := new(RoundRecord)
	var last protowire.Number
	proofBytes := 0
	for len(d.b) > 0 {
		num, typ, err := d.tag()
		if err != nil {
			return nil, err
		}
		if num < last || num == last && num != fTiles && num != fProofs {
			return nil, fmt.Errorf("field %d after field %d", num, last)
		}
		last = num
		var v uint64
		var s []byte
		switch num {
		case fEpoch:
			r.Epoch, err = d.varint(typ)
		case fRound:
			r.Round, err = d.varint(typ)
		case fMiner:
			r.Miner, err = d.bytes(typ, MaxPeerIDLen)
		case fValidator:
			r.Validator, err = d.bytes(typ, MaxPeerIDLen)
		case fChallenge:
			r.Challenge, err = d.bytes(typ, MaxEnvelopeLen)
		case fCommitment:
			r.Commitment, err = d.bytes(typ, MaxEnvelopeLen)
		case fSecret:
			if s, err = d.bytes(typ, len(r.Secret)); err == nil {
				if len(s) != len(r.Secret) {
					return nil, fmt.Errorf("secret: %d bytes, want %d", len(s), len(r.Secret))
				}
				if [32]byte(s) == [32]byte{} {
					return nil, fmt.Errorf("secret: explicit zero value")
				}
				r.Secret = [32]byte(s)
			}
		case fIndices:
			if s, err = d.bytes(typ, MaxSamples*binary.MaxVarintLen64); err == nil {
				r.Indices, err = decodePacked(s)
			}
		case fTiles:
			if len(r.Tiles) == MaxSamples {
				return nil, fmt.Errorf("tiles: more than %d", MaxSamples)
			}
			// An all-zero tile is an empty message: present, not omitted.
			if s, err = d.payload(typ, maxTileMsgLen); err == nil {
				var t TileVerdict
				if t, err = decodeTile(s); err == nil {
					r.Tiles = append(r.Tiles, t)
				}
			}
		case fSentUnixNano:
			v, err = d.varint(typ)
			r.SentUnixNano = protowire.DecodeZigZag(v)
		case fCommitNanos:
			v, err = d.varint(typ)
			r.CommitNanos = protowire.DecodeZigZag(v)
		case fVerifyNanos:
			v, err = d.varint(typ)
			r.VerifyNanos = protowire.DecodeZigZag(v)
		case fFLOPs:
			v, err = d.fixed64(typ)
			r.FLOPs = math.Float64frombits(v)
		case fTFLOPS:
			v, err = d.fixed64(typ)
			r.TFLOPS = math.Float64frombits(v)
		case fVerdict:
			if v, err = d.varint(typ); err == nil && v > math.MaxUint8 {
				return nil, fmt.Errorf("verdict: %d out of range", v)
			}
			r.Verdict = Verdict(v)
		case fReason:
			s, err = d.bytes(typ, MaxReasonLen)
			r.Reason = string(s)
		case fProofs:
			if len(r.Proofs) == MaxProofs {
				return nil, fmt.Errorf("proofs: more than %d", MaxProofs)
			}
			// Framing is checked by validate, after the loop.
			if s, err = d.bytes(typ, min(MaxProofLen, MaxProofsLen-proofBytes)); err == nil {
				proofBytes += len(s)
				r.Proofs = append(r.Proofs, s)
			}
		case fLeaves:
			if s, err = d.payload(typ, 32*MaxSamples); err == nil {
				r.Leaves, err = decodeLeaves(s)
			}
		case fStepArrivals:
			var vs []uint64
			if s, err = d.bytes(typ, MaxSteps*binary.MaxVarintLen64); err == nil {
				if vs, err = decodePacked(s); err == nil {
					for _, a := range vs {
						if a > math.MaxInt64 {
							return nil, fmt.Errorf("step arrivals: %d out of range", a)
						}
						r.StepArrivals = append(r.StepArrivals, int64(a))
					}
				}
			}
		case fRTTNanos:
			v, err = d.varint(typ)
			r.RTTNanos = protowire.DecodeZigZag(v)
		case fPeakTFLOPS:
			v, err = d.fixed64(typ)
			r.PeakTFLOPS = math.Float64frombits(v)
		case fBadTile:
			if s, err = d.payload(typ, maxBadTileMsgLen); err == nil {
				r.BadTile, err = decodeTileData(s)
			}
		default:
			return nil, fmt.Errorf("unknown field %d", num)
		}
		if err != nil {
			return nil, fieldError(num, err)
		}
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return r, nil
}

var fieldNames = [...]string{fEpoch: "epoch", fRound: "round", fMiner: "miner", fValidator: "validator",
	fChallenge: "challenge", fCommitment: "commitment", fSecret: "secret", fIndices: "indices",
	fTiles: "tiles", fSentUnixNano: "sent_unix_nano", fCommitNanos: "commit_nanos",
	fVerifyNanos: "verify_nanos", fFLOPs: "flops", fTFLOPS: "tflops", fVerdict: "verdict", fReason: "reason",
	fProofs: "proofs", fLeaves: "leaves", fStepArrivals: "step_arrivals", fRTTNanos: "rtt_nanos", fPeakTFLOPS: "peak_tflops",
	fBadTile: "bad_tile"}

func fieldError(num protowire.Number, err error) error {
	return fmt.Errorf("field %d (%s): %w", num, fieldNames[num], err)
}

// decodePacked parses packed varints. Every varint ends in exactly one byte
// below 0x80, so counting those bounds the slice before it is allocated.
func decodePacked(s []byte) ([]uint64, error) {
	n := 0
	for _, c := range s {
		if c < 0x80 {
			n++
		}
	}
	if n > MaxSamples {
		return nil, fmt.Errorf("%d values, want at most %d", n, MaxSamples)
	}
	out := make([]uint64, 0, n)
	d := decoder{b: s}
	for len(d.b) > 0 {
		v, err := d.rawVarint()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeLeaves splits concatenated 32-byte chaining values. The caller has
// bounded s; its length fixes the count.
func decodeLeaves(s []byte) ([][32]byte, error) {
	if len(s) == 0 {
		return nil, fmt.Errorf("explicit empty value")
	}
	if len(s)%32 != 0 {
		return nil, fmt.Errorf("%d bytes, not a multiple of 32", len(s))
	}
	out := make([][32]byte, len(s)/32)
	for i := range out {
		out[i] = [32]byte(s[32*i:])
	}
	return out, nil
}

func decodeTile(b []byte) (TileVerdict, error) {
	var t TileVerdict
	d := decoder{b: b}
	var last protowire.Number
	for len(d.b) > 0 {
		num, typ, err := d.tag()
		if err != nil {
			return t, err
		}
		if num <= last {
			return t, fmt.Errorf("tile field %d after field %d", num, last)
		}
		last = num
		var v uint64
		var s []byte
		switch num {
		case fTileIndex:
			t.Index, err = d.varint(typ)
		case fTileOK:
			if v, err = d.varint(typ); err == nil && v != 1 {
				return t, fmt.Errorf("tile ok: %d, want 1", v)
			}
			t.OK = true
		case fTileReason:
			s, err = d.bytes(typ, MaxTileReasonLen)
			t.Reason = string(s)
		default:
			return t, fmt.Errorf("unknown tile field %d", num)
		}
		if err != nil {
			return t, fmt.Errorf("tile field %d: %w", num, err)
		}
	}
	return t, nil
}

// decodeTileData parses a TileData message: an optional index, then data.
func decodeTileData(b []byte) (*TileData, error) {
	t := new(TileData)
	d := decoder{b: b}
	var last protowire.Number
	for len(d.b) > 0 {
		num, typ, err := d.tag()
		if err != nil {
			return nil, err
		}
		if num <= last {
			return nil, fmt.Errorf("tile data field %d after field %d", num, last)
		}
		last = num
		switch num {
		case fDataIndex:
			t.Index, err = d.varint(typ)
		case fDataBytes:
			t.Data, err = d.bytes(typ, MaxTileBytes)
		default:
			return nil, fmt.Errorf("unknown tile data field %d", num)
		}
		if err != nil {
			return nil, fmt.Errorf("tile data field %d: %w", num, err)
		}
	}
	if len(t.Data) == 0 {
		return nil, fmt.Errorf("tile data without data")
	}
	return t, nil
}

// decoder reads canonical protobuf wire format from b, consuming as it goes.
type decoder struct{ b []byte }

func (d *decoder) rawVarint() (uint64, error) {
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	if n != protowire.SizeVarint(v) {
		return 0, fmt.Errorf("non-minimal varint")
	}
	d.b = d.b[n:]
	return v, nil
}

func (d *decoder) tag() (protowire.Number, protowire.Type, error) {
	v, err := d.rawVarint()
	if err != nil {
		return 0, 0, fmt.Errorf("tag: %w", err)
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, fmt.Errorf("tag: invalid field number")
	}
	return num, typ, nil
}

// varint reads a varint field's value; zero is non-canonical (omitted).
func (d *decoder) varint(typ protowire.Type) (uint64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("wire type %d, want varint", typ)
	}
	v, err := d.rawVarint()
	if err == nil && v == 0 {
		err = fmt.Errorf("explicit zero value")
	}
	return v, err
}

// fixed64 reads a fixed64 field's value; zero is non-canonical (omitted).
func (d *decoder) fixed64(typ protowire.Type) (uint64, error) {
	if typ != protowire.Fixed64Type {
		return 0, fmt.Errorf("wire type %d, want fixed64", typ)
	}
	v, n := protowire.ConsumeFixed64(d.b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	d.b = d.b[n:]
	if v == 0 {
		return 0, fmt.Errorf("explicit zero value")
	}
	return v, nil
}

// payload reads a bytes field of at most max bytes, checking the length
// before anything is taken from it. The result aliases the input.
func (d *decoder) payload(typ protowire.Type, max int) ([]byte, error) {
	if typ != protowire.BytesType {
		return nil, fmt.Errorf("wire type %d, want bytes", typ)
	}
	n, err := d.rawVarint()
	if err != nil {
		return nil, fmt.Errorf("length: %w", err)
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("length %d, want at most %d", n, max)
	}
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("length %d, only %d bytes left", n, len(d.b))
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p, nil
}

// bytes is payload for a field whose empty value is omitted, returning a
// copy so that the record does not alias Pebble's buffers.
func (d *decoder) bytes(typ protowire.Type, max int) ([]byte, error) {
	p, err := d.payload(typ, max)
	if err == nil && len(p) == 0 {
		err = fmt.Errorf("explicit empty value")
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(p), nil
}
