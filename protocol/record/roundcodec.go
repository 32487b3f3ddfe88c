package record

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Round encoding, format 1: one format byte (formatV1), then protobuf wire
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

// EncodeRound returns r's canonical encoding, the bytes a store keeps and
// an epoch's evidence root hashes. r must be valid.
func EncodeRound(r *Round) []byte {
	b := make([]byte, 1, roundSizeHint(r))
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
	b = appendBytes(b, fIndices, appendPacked(nil, r.Indices))
	for _, t := range r.Tiles {
		// An all-zero tile is an empty message: present, not omitted.
		b = protowire.AppendTag(b, fTiles, protowire.BytesType)
		b = protowire.AppendBytes(b, encodeTile(t))
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
	b = appendBytes(b, fStepArrivals, appendPacked(nil, r.StepArrivals)) // never negative in a valid record
	b = appendVarint(b, fRTTNanos, protowire.EncodeZigZag(r.RTTNanos))
	b = appendFixed64(b, fPeakTFLOPS, math.Float64bits(r.PeakTFLOPS))
	if t := r.BadTile; t != nil {
		m := appendVarint(nil, fDataIndex, t.Index)
		m = appendBytes(m, fDataBytes, t.Data)
		b = appendBytes(b, fBadTile, m)
	}
	return b
}

// roundSizeHint is about the length of r's encoding, so that EncodeRound
// allocates once.
func roundSizeHint(r *Round) int {
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
	return n
}

func encodeTile(t TileVerdict) []byte {
	var m []byte
	m = appendVarint(m, fTileIndex, t.Index)
	if t.OK {
		m = appendVarint(m, fTileOK, 1)
	}
	return appendBytes(m, fTileReason, []byte(t.Reason))
}

// appendPacked appends vs as packed varints.
func appendPacked[T uint64 | int64](b []byte, vs []T) []byte {
	for _, v := range vs {
		b = protowire.AppendVarint(b, uint64(v))
	}
	return b
}

// DecodeRound parses and validates a canonical round encoding. The bytes
// may come from disk or a peer and may be anything: every length is
// checked against its bound before anything is allocated for it.
func DecodeRound(b []byte) (*Round, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty value")
	}
	if b[0] != formatV1 {
		return nil, fmt.Errorf("unknown format version %d", b[0])
	}
	var m roundMsg
	if err := roundMessage.decode(b[1:], &m); err != nil {
		return nil, err
	}
	if err := m.r.Validate(); err != nil {
		return nil, err
	}
	return &m.r, nil
}

// roundMsg is a round being decoded, with the proof bytes read so far.
type roundMsg struct {
	r          Round
	proofBytes int
}

// roundMessage reads each field of a round record. A field's reader
// bounds its value; Validate checks the record as a whole afterwards.
var roundMessage = message[roundMsg]{repeated: []protowire.Number{fTiles, fProofs}, fields: []field[roundMsg]{
	fEpoch: {"epoch", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Epoch, err = d.varint(t)
		return err
	}},
	fRound: {"round", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Round, err = d.varint(t)
		return err
	}},
	fMiner: {"miner", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Miner, err = d.bytes(t, MaxPeerIDLen)
		return err
	}},
	fValidator: {"validator", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Validator, err = d.bytes(t, MaxPeerIDLen)
		return err
	}},
	fChallenge: {"challenge", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Challenge, err = d.bytes(t, MaxEnvelopeLen)
		return err
	}},
	fCommitment: {"commitment", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		m.r.Commitment, err = d.bytes(t, MaxEnvelopeLen)
		return err
	}},
	fSecret:  {"secret", (*roundMsg).readSecret},
	fIndices: {"indices", (*roundMsg).readIndices},
	fTiles:   {"tiles", (*roundMsg).readTile},
	fSentUnixNano: {"sent_unix_nano", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readSint64(&m.r.SentUnixNano, d, t)
	}},
	fCommitNanos: {"commit_nanos", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readSint64(&m.r.CommitNanos, d, t)
	}},
	fVerifyNanos: {"verify_nanos", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readSint64(&m.r.VerifyNanos, d, t)
	}},
	fFLOPs: {"flops", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readFloat(&m.r.FLOPs, d, t)
	}},
	fTFLOPS: {"tflops", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readFloat(&m.r.TFLOPS, d, t)
	}},
	fVerdict: {"verdict", (*roundMsg).readVerdict},
	fReason: {"reason", func(m *roundMsg, d *reader, t protowire.Type) error {
		s, err := d.bytes(t, MaxReasonLen)
		m.r.Reason = string(s)
		return err
	}},
	fProofs: {"proofs", (*roundMsg).readProof},
	fLeaves: {"leaves", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		s, err := d.payload(t, 32*MaxSamples)
		if err == nil {
			m.r.Leaves, err = decodeLeaves(s)
		}
		return err
	}},
	fStepArrivals: {"step_arrivals", (*roundMsg).readStepArrivals},
	fRTTNanos: {"rtt_nanos", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readSint64(&m.r.RTTNanos, d, t)
	}},
	fPeakTFLOPS: {"peak_tflops", func(m *roundMsg, d *reader, t protowire.Type) error {
		return readFloat(&m.r.PeakTFLOPS, d, t)
	}},
	fBadTile: {"bad_tile", func(m *roundMsg, d *reader, t protowire.Type) (err error) {
		s, err := d.payload(t, maxBadTileMsgLen)
		if err == nil {
			m.r.BadTile, err = decodeTileData(s)
		}
		return err
	}},
}}

// readSint64 reads a zigzag varint field into v.
func readSint64(v *int64, d *reader, t protowire.Type) error {
	u, err := d.varint(t)
	*v = protowire.DecodeZigZag(u)
	return err
}

// readFloat reads an IEEE 754 fixed64 field into v.
func readFloat(v *float64, d *reader, t protowire.Type) error {
	u, err := d.fixed64(t)
	*v = math.Float64frombits(u)
	return err
}

func (m *roundMsg) readSecret(d *reader, t protowire.Type) error {
	s, err := d.bytes(t, len(m.r.Secret))
	switch {
	case err != nil:
		return err
	case len(s) != len(m.r.Secret):
		return fmt.Errorf("secret: %d bytes, want %d", len(s), len(m.r.Secret))
	case [32]byte(s) == [32]byte{}:
		return fmt.Errorf("secret: explicit zero value")
	}
	m.r.Secret = [32]byte(s)
	return nil
}

func (m *roundMsg) readIndices(d *reader, t protowire.Type) error {
	s, err := d.bytes(t, MaxSamples*binary.MaxVarintLen64)
	if err == nil {
		m.r.Indices, err = decodePacked(s)
	}
	return err
}

func (m *roundMsg) readTile(d *reader, t protowire.Type) error {
	if len(m.r.Tiles) == MaxSamples {
		return fmt.Errorf("tiles: more than %d", MaxSamples)
	}
	s, err := d.payload(t, maxTileMsgLen)
	if err != nil {
		return err
	}
	var tile TileVerdict
	if err := tileMessage.decode(s, &tile); err != nil {
		return err
	}
	m.r.Tiles = append(m.r.Tiles, tile)
	return nil
}

func (m *roundMsg) readVerdict(d *reader, t protowire.Type) error {
	v, err := d.varint(t)
	if err == nil && v > math.MaxUint8 {
		return fmt.Errorf("verdict: %d out of range", v)
	}
	m.r.Verdict = Verdict(v)
	return err
}

// readProof reads one proof, bounded by what the proofs read so far leave
// of MaxProofsLen; its framing is checked by Validate.
func (m *roundMsg) readProof(d *reader, t protowire.Type) error {
	if len(m.r.Proofs) == MaxProofs {
		return fmt.Errorf("proofs: more than %d", MaxProofs)
	}
	s, err := d.bytes(t, min(MaxProofLen, MaxProofsLen-m.proofBytes))
	if err != nil {
		return err
	}
	m.proofBytes += len(s)
	m.r.Proofs = append(m.r.Proofs, s)
	return nil
}

func (m *roundMsg) readStepArrivals(d *reader, t protowire.Type) error {
	s, err := d.bytes(t, MaxSteps*binary.MaxVarintLen64)
	if err != nil {
		return err
	}
	vs, err := decodePacked(s)
	if err != nil {
		return err
	}
	for _, a := range vs {
		if a > math.MaxInt64 {
			return fmt.Errorf("step arrivals: %d out of range", a)
		}
		m.r.StepArrivals = append(m.r.StepArrivals, int64(a))
	}
	return nil
}

// tileMessage reads a TileVerdict.
var tileMessage = message[TileVerdict]{what: "tile ", fields: []field[TileVerdict]{
	fTileIndex: {"index", func(m *TileVerdict, d *reader, t protowire.Type) (err error) {
		m.Index, err = d.varint(t)
		return err
	}},
	fTileOK: {"ok", func(m *TileVerdict, d *reader, t protowire.Type) error {
		v, err := d.varint(t)
		if err == nil && v != 1 {
			err = fmt.Errorf("tile ok: %d, want 1", v)
		}
		m.OK = err == nil
		return err
	}},
	fTileReason: {"reason", func(m *TileVerdict, d *reader, t protowire.Type) error {
		s, err := d.bytes(t, MaxTileReasonLen)
		m.Reason = string(s)
		return err
	}},
}}

// tileDataMessage reads a TileData.
var tileDataMessage = message[TileData]{what: "tile data ", fields: []field[TileData]{
	fDataIndex: {"index", func(m *TileData, d *reader, t protowire.Type) (err error) {
		m.Index, err = d.varint(t)
		return err
	}},
	fDataBytes: {"data", func(m *TileData, d *reader, t protowire.Type) (err error) {
		m.Data, err = d.bytes(t, MaxTileBytes)
		return err
	}},
}}

// decodeTileData parses a TileData message: an optional index, then data.
func decodeTileData(b []byte) (*TileData, error) {
	t := new(TileData)
	if err := tileDataMessage.decode(b, t); err != nil {
		return nil, err
	}
	if len(t.Data) == 0 {
		return nil, fmt.Errorf("tile data without data")
	}
	return t, nil
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
	d := reader{b: s}
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
