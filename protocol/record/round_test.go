package record_test

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"

	"github.com/pog-network/pog/proof/commit"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	minimal := &record.Round{Miner: []byte{1}, Validator: []byte{2}, Challenge: []byte{3}, Verdict: record.VerdictFailed, Reason: "x"}
	for name, r := range map[string]*record.Round{
		"verified": recordtest.Round(3, 9, "miner"),
		"failed":   recordtest.Failed(0, 0, "m"),
		"minimal":  minimal,
		"max":      recordtest.Max(),
		"audit":    recordtest.Audit(3, 9, "miner"),
		"chained":  recordtest.Chained(),
		"proofs only": func() *record.Round {
			r := recordtest.Round(1, 1, "m")
			r.Proofs = [][]byte{recordtest.Proof(0)}
			return r
		}(),
		"leaves only": func() *record.Round {
			r := recordtest.Failed(1, 1, "m")
			r.Leaves = recordtest.Leaves(len(r.Indices))
			return r
		}(),
		"bad tile":         recordtest.BadTile(0),
		"bad tile index 7": recordtest.BadTile(7),
		"bad tile max size": func() *record.Round {
			r := recordtest.BadTile(7)
			r.BadTile.Data = make([]byte, record.MaxTileBytes)
			return r
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := r.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			b := record.EncodeRound(r)
			got, err := record.DecodeRound(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("decoded %+v, want %+v", got, r)
			}
			if re := record.EncodeRound(got); !bytes.Equal(re, b) {
				t.Fatal("re-encoding differs")
			}
		})
	}
	// Zero values are omitted: the minimal record is the format byte and
	// the five non-zero fields, each a one-byte tag, length and payload.
	if b := record.EncodeRound(minimal); len(b) != 1+5*3 {
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
	{record.FMiner, func(b []byte) []byte { return bytesField(b, record.FMiner, []byte{1}) }},
	{record.FValidator, func(b []byte) []byte { return bytesField(b, record.FValidator, []byte{2}) }},
	{record.FChallenge, func(b []byte) []byte { return bytesField(b, record.FChallenge, []byte{3}) }},
	{record.FVerdict, func(b []byte) []byte { return varintField(b, record.FVerdict, uint64(record.VerdictFailed)) }},
	{record.FReason, func(b []byte) []byte { return bytesField(b, record.FReason, []byte("x")) }},
}

// around builds a value of the required fields numbered below num, then
// what fn appends, then the required fields numbered above num.
func around(num protowire.Number, fn func(b []byte) []byte) []byte {
	b := []byte{record.FormatV1}
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
	valid := record.EncodeRound(recordtest.Round(1, 2, "miner"))
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
		{"no fields", "miner: 0 bytes", []byte{record.FormatV1}},
		{"truncated tag", "tag", append(bytes.Clone(valid), 0x80)},
		{"truncated length", "length", around(record.FMiner, func(b []byte) []byte { return append(tag(b, record.FMiner, protowire.BytesType), 0x81) })},
		{"truncated payload", "only 1 bytes left", append(tag([]byte{record.FormatV1}, record.FMiner, protowire.BytesType), 5, 1)},
		{"field 0", "invalid field number", []byte{record.FormatV1, 0x02, 0x00}},
		{"unknown field", "unknown field 23", varint(23, 1)},
		{"bad tile without data", "tile data without data", bytesAt(record.FBadTile, varintField(nil, record.FDataIndex, 1))},
		{"bad tile empty data", "explicit empty", bytesAt(record.FBadTile, bytesField(nil, record.FDataBytes, nil))},
		{"bad tile too long", "want at most", bytesAt(record.FBadTile, bytesField(nil, record.FDataBytes, make([]byte, record.MaxTileBytes+1)))},
		{"bad tile unknown field", "unknown tile data field 3", bytesAt(record.FBadTile, varintField(nil, 3, 1))},
		{"bad tile fields out of order", "tile data field 1 after field 2", bytesAt(record.FBadTile, varintField(bytesField(nil, record.FDataBytes, []byte{1}), record.FDataIndex, 1))},
		{"bad tile not sampled", "bad tile: index 0 is not sampled", bytesAt(record.FBadTile, bytesField(nil, record.FDataBytes, []byte{1}))},
		{"duplicate field", "field 3 after field 3", around(record.FMiner, func(b []byte) []byte {
			return bytesField(bytesField(b, record.FMiner, []byte{1}), record.FMiner, []byte{1})
		})},
		{"out of order", "field 1 after field 3", around(record.FMiner, func(b []byte) []byte {
			return varintField(bytesField(b, record.FMiner, []byte{1}), record.FEpoch, 1)
		})},
		{"wrong wire type", "want varint", bytesAt(record.FEpoch, []byte{1})},
		{"wrong wire type fixed64", "want fixed64", varint(record.FFLOPs, 1)},
		{"wrong wire type bytes", "want bytes", varint(record.FCommitment, 1)},
		{"explicit zero", "explicit zero", varint(record.FEpoch, 0)},
		{"explicit empty", "explicit empty", bytesAt(record.FCommitment, nil)},
		{"explicit zero float", "explicit zero", f64(record.FFLOPs, 0)},
		{"non-minimal varint", "non-minimal", around(record.FEpoch, func(b []byte) []byte { return append(tag(b, record.FEpoch, protowire.VarintType), 0x81, 0x00) })},
		{"non-minimal tag", "non-minimal", []byte{record.FormatV1, 0x88, 0x00, 0x01}},
		{"varint overflow", "tag", append([]byte{record.FormatV1}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"miner too long", "length 65", bytesAt(record.FMiner, make([]byte, 65))},
		{"challenge too long", "length 65537", bytesAt(record.FChallenge, make([]byte, record.MaxEnvelopeLen+1))},
		{"huge length", "want at most", around(record.FMiner, func(b []byte) []byte {
			return protowire.AppendVarint(tag(b, record.FMiner, protowire.BytesType), math.MaxUint64)
		})},
		{"short secret", "secret: 31 bytes", bytesAt(record.FSecret, make([]byte, 31))},
		{"zero secret", "secret: explicit zero", bytesAt(record.FSecret, make([]byte, 32))},
		{"too many indices", "4097 values", bytesAt(record.FIndices, make([]byte, record.MaxSamples+1))},
		{"empty indices", "explicit empty", bytesAt(record.FIndices, nil)},
		{"truncated index", "indices", bytesAt(record.FIndices, []byte{0x80})},
		{"too many tiles", "tiles: more than 4096", around(record.FTiles, func(b []byte) []byte {
			for range record.MaxSamples + 1 {
				b = bytesField(b, record.FTiles, nil)
			}
			return b
		})},
		{"tile ok 2", "tile ok: 2", bytesAt(record.FTiles, varintField(nil, record.FTileOK, 2))},
		{"tile unknown field", "unknown tile field 4", bytesAt(record.FTiles, varintField(nil, 4, 1))},
		{"tile duplicate field", "tile field 1 after field 1", bytesAt(record.FTiles, varintField(varintField(nil, record.FTileIndex, 1), record.FTileIndex, 1))},
		{"tile reason too long", "length 1025", bytesAt(record.FTiles, bytesField(nil, record.FTileReason, make([]byte, record.MaxTileReasonLen+1)))},
		{"tile explicit zero", "explicit zero", bytesAt(record.FTiles, varintField(nil, record.FTileIndex, 0))},
		{"verdict 3", "verdict: 3", varint(record.FVerdict, 3)},
		{"verdict 257", "verdict: 257 out of range", varint(record.FVerdict, 257)},
		{"negative commit nanos", "commit nanos: -1", varint(record.FCommitNanos, protowire.EncodeZigZag(-1))},
		{"NaN flops", "flops: NaN", f64(record.FFLOPs, math.Float64bits(math.NaN()))},
		{"negative zero flops", "flops: -0", f64(record.FFLOPs, 1<<63)},
		{"proofs wrong wire type", "field 17 (proofs): wire type 0", varint(record.FProofs, 1)},
		{"empty proof", "field 17 (proofs): explicit empty", bytesAt(record.FProofs, nil)},
		{"empty second proof", "field 17 (proofs): explicit empty", around(record.FProofs, func(b []byte) []byte {
			return bytesField(bytesField(b, record.FProofs, recordtest.Proof(1)), record.FProofs, nil)
		})},
		{"too many proofs", "proofs: more than 4096", around(record.FProofs, func(b []byte) []byte {
			for range record.MaxProofs + 1 {
				b = bytesField(b, record.FProofs, recordtest.Proof(0))
			}
			return b
		})},
		{"proof too long", "length 8388613, want at most 8388612", around(record.FProofs, func(b []byte) []byte {
			// The length alone is refused; no payload follows it.
			return protowire.AppendVarint(tag(b, record.FProofs, protowire.BytesType), record.MaxProofLen+1)
		})},
		{"proof short", "proofs[0]: 3 bytes", bytesAt(record.FProofs, []byte{0, 0, 0})},
		{"proof count mismatch", "proofs[0]: 32 bytes of chaining values for a count of 2", bytesAt(record.FProofs, append([]byte{0, 0, 0, 2}, make([]byte, 32)...))},
		{"proof trailing bytes", "proofs[0]: 33 bytes", bytesAt(record.FProofs, append(recordtest.Proof(1), 0))},
		{"proofs after leaves", "field 17 after field 18", around(record.FLeaves, func(b []byte) []byte {
			return bytesField(bytesField(b, record.FLeaves, make([]byte, 32)), record.FProofs, recordtest.Proof(0))
		})},
		{"leaves not a multiple of 32", "field 18 (leaves): 33 bytes, not a multiple of 32", bytesAt(record.FLeaves, make([]byte, 33))},
		{"leaves short", "field 18 (leaves): 31 bytes, not a multiple of 32", bytesAt(record.FLeaves, make([]byte, 31))},
		{"empty leaves", "field 18 (leaves): explicit empty", bytesAt(record.FLeaves, nil)},
		{"too many leaves", "length 131104, want at most 131072", bytesAt(record.FLeaves, make([]byte, 32*(record.MaxSamples+1)))},
		{"duplicate leaves", "field 18 after field 18", around(record.FLeaves, func(b []byte) []byte {
			return bytesField(bytesField(b, record.FLeaves, make([]byte, 32)), record.FLeaves, make([]byte, 32))
		})},
		{"leaves without indices", "leaves: 1 for 0 indices", bytesAt(record.FLeaves, make([]byte, 32))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := record.DecodeRound(c.b)
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
	for _, r := range []*record.Round{recordtest.Round(1, 2, "miner"), recordtest.Failed(1, 2, "miner")} {
		b := record.EncodeRound(r)
		for n := range len(b) {
			if _, err := record.DecodeRound(b[:n]); err == nil {
				t.Fatalf("%d-byte prefix of a %d-byte %v value decoded", n, len(b), r.Verdict)
			}
		}
	}
	// With proofs and leaves, the prefixes that decode are those that end
	// between whole proofs, and decode to the record with fewer proofs and
	// no leaves.
	r := recordtest.Audit(1, 2, "miner")
	b := record.EncodeRound(r)
	decoded := 0
	for n := range len(b) {
		got, err := record.DecodeRound(b[:n])
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
		edit       func(r *record.Round)
	}{
		{"no miner", "miner: 0 bytes", func(r *record.Round) { r.Miner = nil }},
		{"long miner", "miner: 65 bytes", func(r *record.Round) { r.Miner = make([]byte, 65) }},
		{"no validator", "validator: 0 bytes", func(r *record.Round) { r.Validator = nil }},
		{"long validator", "validator: 65 bytes", func(r *record.Round) { r.Validator = make([]byte, 65) }},
		{"no challenge", "challenge: 0 bytes", func(r *record.Round) { r.Challenge = nil }},
		{"long challenge", "challenge: 65537 bytes", func(r *record.Round) { r.Challenge = make([]byte, record.MaxEnvelopeLen+1) }},
		{"long commitment", "commitment: 65537 bytes", func(r *record.Round) { r.Commitment = make([]byte, record.MaxEnvelopeLen+1) }},
		{"many indices", "indices: 4097", func(r *record.Round) { r.Indices = make([]uint64, record.MaxSamples+1) }},
		{"many tiles", "tiles: 4097", func(r *record.Round) { r.Tiles = make([]record.TileVerdict, record.MaxSamples+1) }},
		{"long tile reason", "tiles[1].reason: 1025 bytes", func(r *record.Round) { r.Tiles[1].Reason = strings.Repeat("x", record.MaxTileReasonLen+1) }},
		{"negative commit nanos", "commit nanos: -1", func(r *record.Round) { r.CommitNanos = -1 }},
		{"commit nanos without commitment", "without a commitment", func(r *record.Round) {
			r.Commitment, r.Verdict, r.Reason, r.TFLOPS = nil, record.VerdictFailed, "x", 0
		}},
		{"negative verify nanos", "verify nanos: -1", func(r *record.Round) { r.VerifyNanos = -1 }},
		{"NaN flops", "flops: NaN", func(r *record.Round) { r.FLOPs = math.NaN() }},
		{"infinite flops", "flops: +Inf", func(r *record.Round) { r.FLOPs = math.Inf(1) }},
		{"negative tflops", "tflops: -1", func(r *record.Round) { r.TFLOPS = -1 }},
		{"negative zero tflops", "tflops: -0", func(r *record.Round) { r.TFLOPS = math.Copysign(0, -1) }},
		{"long reason", "reason: 4097 bytes", func(r *record.Round) {
			r.Verdict, r.TFLOPS, r.Reason = record.VerdictFailed, 0, strings.Repeat("x", record.MaxReasonLen+1)
		}},
		{"no verdict", "verdict: 0", func(r *record.Round) { r.Verdict = 0 }},
		{"unknown verdict", "verdict: 3", func(r *record.Round) { r.Verdict = 3 }},
		{"verified with reason", "on a verified round", func(r *record.Round) { r.Reason = "x" }},
		{"verified without commitment", "commitment: none on a verified round", func(r *record.Round) { r.Commitment, r.CommitNanos = nil, 0 }},
		{"failed without reason", "reason: none on a failed round", func(r *record.Round) { r.Verdict, r.TFLOPS = record.VerdictFailed, 0 }},
		{"failed with tflops", "tflops: 733 (peak 0) on a failed round", func(r *record.Round) { r.Verdict, r.Reason = record.VerdictFailed, "x" }},
		{"failed with peak", "(peak 1) on a failed round", func(r *record.Round) { r.Verdict, r.Reason, r.TFLOPS, r.PeakTFLOPS = record.VerdictFailed, "x", 0, 1 }},
		{"arrivals out of order", "step arrivals: 5 at step 1", func(r *record.Round) { r.StepArrivals = []int64{9, 5} }},
		{"negative rtt", "rtt nanos: -1", func(r *record.Round) { r.RTTNanos = -1 }},
		{"too many arrivals", "step arrivals: 257", func(r *record.Round) { r.StepArrivals = make([]int64, record.MaxSteps+1) }},
		{"many proofs", "proofs: 4097, want at most 4096", func(r *record.Round) { r.Proofs = slices.Repeat([][]byte{recordtest.Proof(0)}, record.MaxProofs+1) }},
		{"empty proof", "proofs[1]: 0 bytes", func(r *record.Round) { r.Proofs[1] = nil }},
		{"short proof", "proofs[2]: 3 bytes", func(r *record.Round) { r.Proofs[2] = []byte{0, 0, 0} }},
		{"long proof", "proofs[0]: 8388644 bytes, want 4..8388612", func(r *record.Round) { r.Proofs[0] = recordtest.Proof(commit.MaxProofCVs + 1) }},
		{"proof count too high", "proofs[0]: 96 bytes of chaining values for a count of 4", func(r *record.Round) { r.Proofs[0][3]++ }},
		{"proof truncated", "proofs[0]: 95 bytes of chaining values for a count of 3", func(r *record.Round) { r.Proofs[0] = r.Proofs[0][:99] }},
		{"fewer leaves than indices", "leaves: 3 for 4 indices", func(r *record.Round) { r.Leaves = r.Leaves[:3] }},
		{"more leaves than indices", "leaves: 4 for 3 indices", func(r *record.Round) { r.Indices = r.Indices[:3] }},
		{"leaves without indices", "leaves: 4 for 0 indices", func(r *record.Round) { r.Indices = nil }},
		{"bad tile on a verified round", "bad tile: on a round that did not fail", func(r *record.Round) { r.BadTile = &record.TileData{Index: 7, Data: []byte{1}} }},
		{"bad tile empty", "bad tile: 0 bytes", func(r *record.Round) { fail(r); r.BadTile = &record.TileData{Index: 7} }},
		{"bad tile too long", "bad tile: 1048577 bytes", func(r *record.Round) {
			fail(r)
			r.BadTile = &record.TileData{Index: 7, Data: make([]byte, record.MaxTileBytes+1)}
		}},
		{"bad tile not sampled", "bad tile: index 8 is not sampled", func(r *record.Round) { fail(r); r.BadTile = &record.TileData{Index: 8, Data: []byte{1}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := recordtest.Audit(1, 1, "miner")
			c.edit(r)
			if err := r.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("validate: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestMaxRoundLen: a record with every field at its bound, proofs and the
// bad tile included, encodes within record.MaxRoundLen.
func TestMaxRoundLen(t *testing.T) {
	r := recordtest.Max()
	last := record.MaxProofsLen - 4*(record.MaxProofs-1) // what the empty proofs leave
	r.Proofs[record.MaxProofs-1] = recordtest.Proof((last - 4) / 32)
	r.BadTile = &record.TileData{Index: r.Indices[0], Data: make([]byte, record.MaxTileBytes)}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := len(record.EncodeRound(r)); n > record.MaxRoundLen {
		t.Fatalf("largest record encodes to %d bytes, over record.MaxRoundLen %d", n, record.MaxRoundLen)
	}
}

func fail(r *record.Round) { r.Verdict, r.Reason, r.TFLOPS = record.VerdictFailed, "x", 0 }

// TestProofBounds checks the proof bounds at their limit without encoding:
// the longest proof beside record.MaxProofs−1 empty ones is valid, one value more
// is not.
func TestProofBounds(t *testing.T) {
	r := recordtest.Audit(1, 1, "miner")
	r.Proofs = append(slices.Repeat([][]byte{recordtest.Proof(0)}, record.MaxProofs-1), recordtest.Proof(commit.MaxProofCVs))
	if err := r.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	r.Proofs[0] = recordtest.Proof(1)
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "bytes together") {
		t.Fatalf("proofs over their joint bound: %v", err)
	}
	r.Proofs = append(slices.Repeat([][]byte{recordtest.Proof(0)}, record.MaxProofs-1), recordtest.Proof(commit.MaxProofCVs))
	if record.MaxProofLen != 4+32*commit.MaxProofCVs || len(r.Proofs[record.MaxProofs-1]) != record.MaxProofLen {
		t.Fatalf("record.MaxProofLen %d, longest test proof %d bytes", record.MaxProofLen, len(r.Proofs[record.MaxProofs-1]))
	}
	// The proofs decode as commit proofs.
	for _, p := range recordtest.Audit(1, 1, "miner").Proofs {
		if _, err := commit.DecodeProof(p); err != nil {
			t.Fatalf("commit.DecodeProof(%x): %v", p[:4], err)
		}
	}
}

func FuzzDecodeRound(f *testing.F) {
	f.Add(record.EncodeRound(recordtest.Round(1, 2, "miner")))
	f.Add(record.EncodeRound(recordtest.Failed(0, 0, "m")))
	f.Add(record.EncodeRound(recordtest.Audit(1, 2, "miner")))
	f.Add(around(record.FLeaves, func(b []byte) []byte { return bytesField(b, record.FLeaves, make([]byte, 33)) }))
	f.Add([]byte{record.FormatV1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := record.DecodeRound(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded an invalid record: %v", err)
		}
		// The decoder accepts only the canonical form, so re-encoding
		// anything it accepts gives back the input.
		if re := record.EncodeRound(r); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding %x gives %x", b, re)
		}
	})
}
