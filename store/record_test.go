package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/proof/commit"
	"google.golang.org/protobuf/encoding/protowire"
)

// testRecord returns a valid, fully populated record for the key.
func testRecord(epoch, round uint64, miner string) *RoundRecord {
	r := &RoundRecord{
		Epoch:        epoch,
		Round:        round,
		Miner:        []byte(miner),
		Validator:    []byte("validator-1"),
		Challenge:    []byte("signed challenge envelope"),
		Commitment:   []byte("signed commitment envelope"),
		Indices:      []uint64{0, 7, 1 << 40, math.MaxUint64},
		Tiles:        []TileVerdict{{Index: 0, OK: true}, {Index: 7, Reason: "freivalds mismatch"}, {}},
		SentUnixNano: -5,
		CommitNanos:  1_500_000_000,
		VerifyNanos:  3_000_000,
		FLOPs:        2 * 8192 * 8192 * 8192,
		TFLOPS:       733.0,
		Verdict:      VerdictVerified,
	}
	for i := range r.Secret {
		r.Secret[i] = byte(i + 1)
	}
	return r
}

// testProof returns an encoded commit.Proof of n chaining values.
func testProof(n int) []byte {
	p := binary.BigEndian.AppendUint32(make([]byte, 0, 4+32*n), uint32(n))
	for i := range 32 * n {
		p = append(p, byte(i*7+n))
	}
	return p
}

// testLeaves returns n distinct chaining values.
func testLeaves(n int) [][32]byte {
	l := make([][32]byte, n)
	for i := range l {
		binary.BigEndian.PutUint64(l[i][:], uint64(i)+1)
		l[i][31] = 0xcc
	}
	return l
}

// auditRecord is testRecord with the audit evidence: proofs and leaves.
func auditRecord(epoch, round uint64, miner string) *RoundRecord {
	r := testRecord(epoch, round, miner)
	r.Proofs = [][]byte{testProof(3), testProof(0), testProof(1)}
	r.Leaves = testLeaves(len(r.Indices))
	return r
}

// chainedRecord has a chained round's timing evidence.
func chainedRecord() *RoundRecord {
	r := auditRecord(4, 2, "miner")
	r.StepArrivals, r.RTTNanos, r.PeakTFLOPS = []int64{0, 10, 10, 1 << 40}, 400_000_000, 801.5
	return r
}

// badTileRecord is a failed round keeping the bytes of sampled tile idx.
func badTileRecord(idx uint64) *RoundRecord {
	r := auditRecord(2, 3, "miner")
	r.TFLOPS, r.Verdict, r.Reason = 0, VerdictFailed, "tile 7: tile values are not A·B"
	r.BadTile = &TileData{Index: idx, Data: []byte{1, 2, 3, 4}}
	return r
}

func failedRecord(epoch, round uint64, miner string) *RoundRecord {
	r := testRecord(epoch, round, miner)
	r.Commitment, r.CommitNanos, r.TFLOPS = nil, 0, 0
	r.Verdict, r.Reason = VerdictFailed, "no commitment before the deadline"
	return r
}

// maxRecord has every field at its bound, except that only its last proof
// is as long as a proof may be (all sixteen would make a 128 MiB value).
func maxRecord() *RoundRecord {
	r := testRecord(math.MaxUint64, math.MaxUint64, strings.Repeat("m", MaxPeerIDLen))
	r.Validator = bytes.Repeat([]byte{'v'}, MaxPeerIDLen)
	r.Challenge = bytes.Repeat([]byte{'c'}, MaxEnvelopeLen)
	r.Commitment = bytes.Repeat([]byte{'k'}, MaxEnvelopeLen)
	r.Indices = make([]uint64, MaxSamples)
	r.Tiles = make([]TileVerdict, MaxSamples)
	for i := range r.Indices {
		r.Indices[i] = math.MaxUint64 - uint64(i)
		r.Tiles[i] = TileVerdict{Index: math.MaxUint64, OK: true, Reason: strings.Repeat("t", MaxTileReasonLen)}
	}
	r.SentUnixNano, r.CommitNanos, r.VerifyNanos = math.MinInt64, math.MaxInt64, math.MaxInt64
	r.FLOPs = math.MaxFloat64
	r.TFLOPS = 0
	r.Verdict, r.Reason = VerdictFailed, strings.Repeat("r", MaxReasonLen)
	r.Proofs = make([][]byte, MaxProofs)
	for i := range r.Proofs {
		r.Proofs[i] = testProof(0)
	}
	r.Proofs[MaxProofs-1] = testProof(commit.MaxProofCVs)
	r.Leaves = testLeaves(MaxSamples)
	return r
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	minimal := &RoundRecord{Miner: []byte{1}, Validator: []byte{2}, Challenge: []byte{3}, Verdict: VerdictFailed, Reason: "x"}
	for name, r := range map[string]*RoundRecord{
		"verified": testRecord(3, 9, "miner"),
		"failed":   failedRecord(0, 0, "m"),
		"minimal":  minimal,
		"max":      maxRecord(),
		"audit":    auditRecord(3, 9, "miner"),
		"chained":  chainedRecord(),
		"proofs only": func() *RoundRecord {
			r := testRecord(1, 1, "m")
			r.Proofs = [][]byte{testProof(0)}
			return r
		}(),
		"leaves only": func() *RoundRecord {
			r := failedRecord(1, 1, "m")
			r.Leaves = testLeaves(len(r.Indices))
			return r
		}(),
		"bad tile":          badTileRecord(0),
		"bad tile index 7":  badTileRecord(7),
		"bad tile max size": func() *RoundRecord { r := badTileRecord(7); r.BadTile.Data = make([]byte, MaxTileBytes); return r }(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := r.validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			b := encodeRound(r)
			got, err := decodeRound(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("decoded %+v, want %+v", got, r)
			}
			if re := encodeRound(got); !bytes.Equal(re, b) {
				t.Fatal("re-encoding differs")
			}
		})
	}
	// Zero values are omitted: the minimal record is the format byte and
	// the five non-zero fields, each a one-byte tag, length and payload.
	if b := encodeRound(minimal); len(b) != 1+5*3 {
		t.Fatalf("minimal record encodes to %d bytes (%x), want 16", len(b), b)
	}
}

func tag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(b, num, typ)
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(tag(b, num, protowire.BytesType), v)
}

func varintField(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(tag(b, num, protowire.VarintType), v)
}

// requiredFields are the fields of a minimal valid (failed) record.
var requiredFields = []struct {
	num protowire.Number
	add func([]byte) []byte
}{
	{fMiner, func(b []byte) []byte { return bytesField(b, fMiner, []byte{1}) }},
	{fValidator, func(b []byte) []byte { return bytesField(b, fValidator, []byte{2}) }},
	{fChallenge, func(b []byte) []byte { return bytesField(b, fChallenge, []byte{3}) }},
	{fVerdict, func(b []byte) []byte { return varintField(b, fVerdict, uint64(VerdictFailed)) }},
	{fReason, func(b []byte) []byte { return bytesField(b, fReason, []byte("x")) }},
}

// around builds a value of the required fields numbered below num, then
// what fn appends, then the required fields numbered above num.
func around(num protowire.Number, fn func(b []byte) []byte) []byte {
	b := []byte{formatV1}
	for _, f := range requiredFields {
		if f.num < num {
			b = f.add(b)
		}
	}
	b = fn(b)
	for _, f := range requiredFields {
		if f.num > num {
			b = f.add(b)
		}
	}
	return b
}

func TestDecodeRejects(t *testing.T) {
	valid := encodeRound(testRecord(1, 2, "miner"))
	f64 := func(num protowire.Number, v uint64) []byte {
		return around(num, func(b []byte) []byte { return protowire.AppendFixed64(tag(b, num, protowire.Fixed64Type), v) })
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return around(num, func(b []byte) []byte { return varintField(b, num, v) })
	}
	bytesAt := func(num protowire.Number, v []byte) []byte {
		return around(num, func(b []byte) []byte { return bytesField(b, num, v) })
	}
	cases := []struct {
		name, want string
		b          []byte
	}{
		{"empty", "empty value", nil},
		{"format 0", "unknown format version 0", []byte{0}},
		{"format 2", "unknown format version 2", append([]byte{2}, valid[1:]...)},
		{"no fields", "miner: 0 bytes", []byte{formatV1}},
		{"truncated tag", "tag", append(bytes.Clone(valid), 0x80)},
		{"truncated length", "length", around(fMiner, func(b []byte) []byte { return append(tag(b, fMiner, protowire.BytesType), 0x81) })},
		{"truncated payload", "only 1 bytes left", append(tag([]byte{formatV1}, fMiner, protowire.BytesType), 5, 1)},
		{"field 0", "invalid field number", []byte{formatV1, 0x02, 0x00}},
		{"unknown field", "unknown field 23", varint(23, 1)},
		{"bad tile without data", "tile data without data", bytesAt(fBadTile, varintField(nil, fDataIndex, 1))},
		{"bad tile empty data", "explicit empty", bytesAt(fBadTile, bytesField(nil, fDataBytes, nil))},
		{"bad tile too long", "want at most", bytesAt(fBadTile, bytesField(nil, fDataBytes, make([]byte, MaxTileBytes+1)))},
		{"bad tile unknown field", "unknown tile data field 3", bytesAt(fBadTile, varintField(nil, 3, 1))},
		{"bad tile fields out of order", "tile data field 1 after field 2", bytesAt(fBadTile, varintField(bytesField(nil, fDataBytes, []byte{1}), fDataIndex, 1))},
		{"bad tile not sampled", "bad tile: index 0 is not sampled", bytesAt(fBadTile, bytesField(nil, fDataBytes, []byte{1}))},
		{"duplicate field", "field 3 after field 3", around(fMiner, func(b []byte) []byte {
			return bytesField(bytesField(b, fMiner, []byte{1}), fMiner, []byte{1})
		})},
		{"out of order", "field 1 after field 3", around(fMiner, func(b []byte) []byte {
			return varintField(bytesField(b, fMiner, []byte{1}), fEpoch, 1)
		})},
		{"wrong wire type", "want varint", bytesAt(fEpoch, []byte{1})},
		{"wrong wire type fixed64", "want fixed64", varint(fFLOPs, 1)},
		{"wrong wire type bytes", "want bytes", varint(fCommitment, 1)},
		{"explicit zero", "explicit zero", varint(fEpoch, 0)},
		{"explicit empty", "explicit empty", bytesAt(fCommitment, nil)},
		{"explicit zero float", "explicit zero", f64(fFLOPs, 0)},
		{"non-minimal varint", "non-minimal", around(fEpoch, func(b []byte) []byte { return append(tag(b, fEpoch, protowire.VarintType), 0x81, 0x00) })},
		{"non-minimal tag", "non-minimal", []byte{formatV1, 0x88, 0x00, 0x01}},
		{"varint overflow", "tag", append([]byte{formatV1}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"miner too long", "length 65", bytesAt(fMiner, make([]byte, 65))},
		{"challenge too long", "length 65537", bytesAt(fChallenge, make([]byte, MaxEnvelopeLen+1))},
		{"huge length", "want at most", around(fMiner, func(b []byte) []byte {
			return protowire.AppendVarint(tag(b, fMiner, protowire.BytesType), math.MaxUint64)
		})},
		{"short secret", "secret: 31 bytes", bytesAt(fSecret, make([]byte, 31))},
		{"zero secret", "secret: explicit zero", bytesAt(fSecret, make([]byte, 32))},
		{"too many indices", "4097 values", bytesAt(fIndices, make([]byte, MaxSamples+1))},
		{"empty indices", "explicit empty", bytesAt(fIndices, nil)},
		{"truncated index", "indices", bytesAt(fIndices, []byte{0x80})},
		{"too many tiles", "tiles: more than 4096", around(fTiles, func(b []byte) []byte {
			for range MaxSamples + 1 {
				b = bytesField(b, fTiles, nil)
			}
			return b
		})},
		{"tile ok 2", "tile ok: 2", bytesAt(fTiles, varintField(nil, fTileOK, 2))},
		{"tile unknown field", "unknown tile field 4", bytesAt(fTiles, varintField(nil, 4, 1))},
		{"tile duplicate field", "tile field 1 after field 1", bytesAt(fTiles, varintField(varintField(nil, fTileIndex, 1), fTileIndex, 1))},
		{"tile reason too long", "length 1025", bytesAt(fTiles, bytesField(nil, fTileReason, make([]byte, MaxTileReasonLen+1)))},
		{"tile explicit zero", "explicit zero", bytesAt(fTiles, varintField(nil, fTileIndex, 0))},
		{"verdict 3", "verdict: 3", varint(fVerdict, 3)},
		{"verdict 257", "verdict: 257 out of range", varint(fVerdict, 257)},
		{"negative commit nanos", "commit nanos: -1", varint(fCommitNanos, protowire.EncodeZigZag(-1))},
		{"NaN flops", "flops: NaN", f64(fFLOPs, math.Float64bits(math.NaN()))},
		{"negative zero flops", "flops: -0", f64(fFLOPs, 1<<63)},
		{"proofs wrong wire type", "field 17 (proofs): wire type 0", varint(fProofs, 1)},
		{"empty proof", "field 17 (proofs): explicit empty", bytesAt(fProofs, nil)},
		{"empty second proof", "field 17 (proofs): explicit empty", around(fProofs, func(b []byte) []byte {
			return bytesField(bytesField(b, fProofs, testProof(1)), fProofs, nil)
		})},
		{"too many proofs", "proofs: more than 4096", around(fProofs, func(b []byte) []byte {
			for range MaxProofs + 1 {
				b = bytesField(b, fProofs, testProof(0))
			}
			return b
		})},
		{"proof too long", "length 8388613, want at most 8388612", around(fProofs, func(b []byte) []byte {
			// The length alone is refused; no payload follows it.
			return protowire.AppendVarint(tag(b, fProofs, protowire.BytesType), MaxProofLen+1)
		})},
		{"proof short", "proofs[0]: 3 bytes", bytesAt(fProofs, []byte{0, 0, 0})},
		{"proof count mismatch", "proofs[0]: 32 bytes of chaining values for a count of 2", bytesAt(fProofs, append([]byte{0, 0, 0, 2}, make([]byte, 32)...))},
		{"proof trailing bytes", "proofs[0]: 33 bytes", bytesAt(fProofs, append(testProof(1), 0))},
		{"proofs after leaves", "field 17 after field 18", around(fLeaves, func(b []byte) []byte {
			return bytesField(bytesField(b, fLeaves, make([]byte, 32)), fProofs, testProof(0))
		})},
		{"leaves not a multiple of 32", "field 18 (leaves): 33 bytes, not a multiple of 32", bytesAt(fLeaves, make([]byte, 33))},
		{"leaves short", "field 18 (leaves): 31 bytes, not a multiple of 32", bytesAt(fLeaves, make([]byte, 31))},
		{"empty leaves", "field 18 (leaves): explicit empty", bytesAt(fLeaves, nil)},
		{"too many leaves", "length 131104, want at most 131072", bytesAt(fLeaves, make([]byte, 32*(MaxSamples+1)))},
		{"duplicate leaves", "field 18 after field 18", around(fLeaves, func(b []byte) []byte {
			return bytesField(bytesField(b, fLeaves, make([]byte, 32)), fLeaves, make([]byte, 32))
		})},
		{"leaves without indices", "leaves: 1 for 0 indices", bytesAt(fLeaves, make([]byte, 32))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeRound(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("decode %x: error %v, want one containing %q", c.b, err, c.want)
			}
		})
	}
}

// Every strict prefix of a valid value without proofs or leaves fails to
// decode: the last field is either the verdict or a failed round's reason,
// both required. (A value cut just before the optional fields 17 and 18
// decodes, as the record without them; a value cut inside them does not.)
func TestDecodeTruncated(t *testing.T) {
	for _, r := range []*RoundRecord{testRecord(1, 2, "miner"), failedRecord(1, 2, "miner")} {
		b := encodeRound(r)
		for n := range len(b) {
			if _, err := decodeRound(b[:n]); err == nil {
				t.Fatalf("%d-byte prefix of a %d-byte %v value decoded", n, len(b), r.Verdict)
			}
		}
	}
	// With proofs and leaves, the prefixes that decode are those that end
	// between whole proofs, and decode to the record with fewer proofs and
	// no leaves.
	r := auditRecord(1, 2, "miner")
	b := encodeRound(r)
	decoded := 0
	for n := range len(b) {
		got, err := decodeRound(b[:n])
		if err != nil {
			continue
		}
		decoded++
		want := *r
		want.Proofs, want.Leaves = r.Proofs[:len(got.Proofs)], nil
		if len(want.Proofs) == 0 {
			want.Proofs = nil
		}
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("%d-byte prefix of a %d-byte value decoded to %+v", n, len(b), got)
		}
	}
	if decoded != 1+len(r.Proofs) {
		t.Fatalf("%d prefixes decoded, want %d", decoded, 1+len(r.Proofs))
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(r *RoundRecord)
	}{
		{"no miner", "miner: 0 bytes", func(r *RoundRecord) { r.Miner = nil }},
		{"long miner", "miner: 65 bytes", func(r *RoundRecord) { r.Miner = make([]byte, 65) }},
		{"no validator", "validator: 0 bytes", func(r *RoundRecord) { r.Validator = nil }},
		{"long validator", "validator: 65 bytes", func(r *RoundRecord) { r.Validator = make([]byte, 65) }},
		{"no challenge", "challenge: 0 bytes", func(r *RoundRecord) { r.Challenge = nil }},
		{"long challenge", "challenge: 65537 bytes", func(r *RoundRecord) { r.Challenge = make([]byte, MaxEnvelopeLen+1) }},
		{"long commitment", "commitment: 65537 bytes", func(r *RoundRecord) { r.Commitment = make([]byte, MaxEnvelopeLen+1) }},
		{"many indices", "indices: 4097", func(r *RoundRecord) { r.Indices = make([]uint64, MaxSamples+1) }},
		{"many tiles", "tiles: 4097", func(r *RoundRecord) { r.Tiles = make([]TileVerdict, MaxSamples+1) }},
		{"long tile reason", "tiles[1].reason: 1025 bytes", func(r *RoundRecord) { r.Tiles[1].Reason = strings.Repeat("x", MaxTileReasonLen+1) }},
		{"negative commit nanos", "commit nanos: -1", func(r *RoundRecord) { r.CommitNanos = -1 }},
		{"commit nanos without commitment", "without a commitment", func(r *RoundRecord) {
			r.Commitment, r.Verdict, r.Reason, r.TFLOPS = nil, VerdictFailed, "x", 0
		}},
		{"negative verify nanos", "verify nanos: -1", func(r *RoundRecord) { r.VerifyNanos = -1 }},
		{"NaN flops", "flops: NaN", func(r *RoundRecord) { r.FLOPs = math.NaN() }},
		{"infinite flops", "flops: +Inf", func(r *RoundRecord) { r.FLOPs = math.Inf(1) }},
		{"negative tflops", "tflops: -1", func(r *RoundRecord) { r.TFLOPS = -1 }},
		{"negative zero tflops", "tflops: -0", func(r *RoundRecord) { r.TFLOPS = math.Copysign(0, -1) }},
		{"long reason", "reason: 4097 bytes", func(r *RoundRecord) {
			r.Verdict, r.TFLOPS, r.Reason = VerdictFailed, 0, strings.Repeat("x", MaxReasonLen+1)
		}},
		{"no verdict", "verdict: 0", func(r *RoundRecord) { r.Verdict = 0 }},
		{"unknown verdict", "verdict: 3", func(r *RoundRecord) { r.Verdict = 3 }},
		{"verified with reason", "on a verified round", func(r *RoundRecord) { r.Reason = "x" }},
		{"verified without commitment", "commitment: none on a verified round", func(r *RoundRecord) { r.Commitment, r.CommitNanos = nil, 0 }},
		{"failed without reason", "reason: none on a failed round", func(r *RoundRecord) { r.Verdict, r.TFLOPS = VerdictFailed, 0 }},
		{"failed with tflops", "tflops: 733 (peak 0) on a failed round", func(r *RoundRecord) { r.Verdict, r.Reason = VerdictFailed, "x" }},
		{"failed with peak", "(peak 1) on a failed round", func(r *RoundRecord) { r.Verdict, r.Reason, r.TFLOPS, r.PeakTFLOPS = VerdictFailed, "x", 0, 1 }},
		{"arrivals out of order", "step arrivals: 5 at step 1", func(r *RoundRecord) { r.StepArrivals = []int64{9, 5} }},
		{"negative rtt", "rtt nanos: -1", func(r *RoundRecord) { r.RTTNanos = -1 }},
		{"too many arrivals", "step arrivals: 257", func(r *RoundRecord) { r.StepArrivals = make([]int64, MaxSteps+1) }},
		{"many proofs", "proofs: 4097, want at most 4096", func(r *RoundRecord) { r.Proofs = slices.Repeat([][]byte{testProof(0)}, MaxProofs+1) }},
		{"empty proof", "proofs[1]: 0 bytes", func(r *RoundRecord) { r.Proofs[1] = nil }},
		{"short proof", "proofs[2]: 3 bytes", func(r *RoundRecord) { r.Proofs[2] = []byte{0, 0, 0} }},
		{"long proof", "proofs[0]: 8388644 bytes, want 4..8388612", func(r *RoundRecord) { r.Proofs[0] = testProof(commit.MaxProofCVs + 1) }},
		{"proof count too high", "proofs[0]: 96 bytes of chaining values for a count of 4", func(r *RoundRecord) { r.Proofs[0][3]++ }},
		{"proof truncated", "proofs[0]: 95 bytes of chaining values for a count of 3", func(r *RoundRecord) { r.Proofs[0] = r.Proofs[0][:99] }},
		{"fewer leaves than indices", "leaves: 3 for 4 indices", func(r *RoundRecord) { r.Leaves = r.Leaves[:3] }},
		{"more leaves than indices", "leaves: 4 for 3 indices", func(r *RoundRecord) { r.Indices = r.Indices[:3] }},
		{"leaves without indices", "leaves: 4 for 0 indices", func(r *RoundRecord) { r.Indices = nil }},
		{"bad tile on a verified round", "bad tile: on a round that did not fail", func(r *RoundRecord) { r.BadTile = &TileData{Index: 7, Data: []byte{1}} }},
		{"bad tile empty", "bad tile: 0 bytes", func(r *RoundRecord) { fail(r); r.BadTile = &TileData{Index: 7} }},
		{"bad tile too long", "bad tile: 1048577 bytes", func(r *RoundRecord) { fail(r); r.BadTile = &TileData{Index: 7, Data: make([]byte, MaxTileBytes+1)} }},
		{"bad tile not sampled", "bad tile: index 8 is not sampled", func(r *RoundRecord) { fail(r); r.BadTile = &TileData{Index: 8, Data: []byte{1}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := auditRecord(1, 1, "miner")
			c.edit(r)
			if err := r.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("validate: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestMaxRoundLen: a record with every field at its bound, proofs and the
// bad tile included, encodes within MaxRoundLen.
func TestMaxRoundLen(t *testing.T) {
	r := maxRecord()
	last := MaxProofsLen - 4*(MaxProofs-1) // what the empty proofs leave
	r.Proofs[MaxProofs-1] = testProof((last - 4) / 32)
	r.BadTile = &TileData{Index: r.Indices[0], Data: make([]byte, MaxTileBytes)}
	if err := r.validate(); err != nil {
		t.Fatal(err)
	}
	if n := len(encodeRound(r)); n > MaxRoundLen {
		t.Fatalf("largest record encodes to %d bytes, over MaxRoundLen %d", n, MaxRoundLen)
	}
}

func fail(r *RoundRecord) { r.Verdict, r.Reason, r.TFLOPS = VerdictFailed, "x", 0 }

// TestProofBounds checks the proof bounds at their limit without encoding:
// the longest proof beside MaxProofs−1 empty ones is valid, one value more
// is not.
func TestProofBounds(t *testing.T) {
	r := auditRecord(1, 1, "miner")
	r.Proofs = append(slices.Repeat([][]byte{testProof(0)}, MaxProofs-1), testProof(commit.MaxProofCVs))
	if err := r.validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	r.Proofs[0] = testProof(1)
	if err := r.validate(); err == nil || !strings.Contains(err.Error(), "bytes together") {
		t.Fatalf("proofs over their joint bound: %v", err)
	}
	r.Proofs = append(slices.Repeat([][]byte{testProof(0)}, MaxProofs-1), testProof(commit.MaxProofCVs))
	if MaxProofLen != 4+32*commit.MaxProofCVs || len(r.Proofs[MaxProofs-1]) != MaxProofLen {
		t.Fatalf("MaxProofLen %d, longest test proof %d bytes", MaxProofLen, len(r.Proofs[MaxProofs-1]))
	}
	// The proofs decode as commit proofs.
	for _, p := range auditRecord(1, 1, "miner").Proofs {
		if _, err := commit.DecodeProof(p); err != nil {
			t.Fatalf("commit.DecodeProof(%x): %v", p[:4], err)
		}
	}
}

func FuzzDecodeRound(f *testing.F) {
	f.Add(encodeRound(testRecord(1, 2, "miner")))
	f.Add(encodeRound(failedRecord(0, 0, "m")))
	f.Add(encodeRound(auditRecord(1, 2, "miner")))
	f.Add(around(fLeaves, func(b []byte) []byte { return bytesField(b, fLeaves, make([]byte, 33)) }))
	f.Add([]byte{formatV1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRound(b)
		if err != nil {
			return
		}
		if err := r.validate(); err != nil {
			t.Fatalf("decoded an invalid record: %v", err)
		}
		// The decoder accepts only the canonical form, so re-encoding
		// anything it accepts gives back the input.
		if re := encodeRound(r); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding %x gives %x", b, re)
		}
	})
}
