package proof

import (
	"errors"
	"math"
	"testing"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// round is one challenge as a miner and validator play it.
type round struct {
	p      Params
	out    []byte
	leaves []commit.CV
	tr     Transcript
}

// commitRound has the miner commit out and the validator reveal its secret.
func commitRound(t *testing.T, p Params, out []byte) *round {
	t.Helper()
	leaves, err := commit.TileCVs(out, p.TileBytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	root, err := commit.Root(leaves)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := sample.Count(sample.DefaultFraction, sample.DefaultProbability, p.Tiles())
	secret := [32]byte{7, 7, 7}
	return &round{p: p, out: out, leaves: leaves, tr: Transcript{
		Params: p, SecretCommitment: sample.Commit(secret), Root: root, Secret: secret, Samples: k,
	}}
}

// open returns the sampled tiles and their batch proof, as a miner serves them.
func (r *round) open(t *testing.T) ([]uint64, [][]byte, commit.Proof) {
	t.Helper()
	idx, err := r.tr.Indices()
	if err != nil {
		t.Fatal(err)
	}
	tb := uint64(r.p.TileBytes())
	tiles := make([][]byte, len(idx))
	for i, x := range idx {
		tiles[i] = append([]byte(nil), r.out[x*tb:(x+1)*tb]...)
	}
	proof, err := commit.Prove(r.leaves, idx)
	if err != nil {
		t.Fatal(err)
	}
	return idx, tiles, proof
}

func wantReason(t *testing.T, err error, want Reason) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want failure %q", err, want)
	}
	if f.Reason != want {
		t.Fatalf("got %q (%v), want %q", f.Reason, err, want)
	}
}

func bigParams(prec Precision, miner string) Params {
	p := Params{Precision: prec, Batch: 2, M: 256, K: 64, N: 128, Tile: 16, Miner: []byte(miner)}
	p.Nonce[3] = 9
	return p
}

func TestHonestMinerVerifies(t *testing.T) {
	for _, prec := range []Precision{FP16, FP32} {
		p := bigParams(prec, "honest")
		r := commitRound(t, p, honestOutput(t, p))
		_, tiles, proof := r.open(t)
		if len(tiles) != 66 {
			t.Fatalf("opened %d tiles, want 66", len(tiles))
		}
		if err := r.tr.Verify(tiles, proof, nil); err != nil {
			t.Fatalf("%v: honest miner rejected: %v", prec, err)
		}
	}
}

// A lazy miner skips half its tiles (zeros) but commits honestly to what it
// wrote. The chance 66 samples from 512 tiles miss all 256 zero tiles is
// below 2^-66, so the verdict does not depend on the secret.
func TestLazyMiner(t *testing.T) {
	p := bigParams(FP16, "lazy")
	out := honestOutput(t, p)
	tb := p.TileBytes()
	for i := 0; i < int(p.Tiles()); i += 2 {
		clear(out[i*tb : (i+1)*tb])
	}
	r := commitRound(t, p, out)
	_, tiles, proof := r.open(t)
	wantReason(t, r.tr.Verify(tiles, proof, nil), ReasonNotComputed)
}

// roundTF32 rounds an integer to TF32's 11-bit significand, ties to even,
// as a tensor core reading fp32 inputs in TF32 mode does.
func roundTF32(x int32) int32 {
	f := math.Float32bits(float32(x))
	const drop = 13 // 23 - 10 mantissa bits
	half := uint32(1) << (drop - 1)
	rest := f & (1<<drop - 1)
	f &^= 1<<drop - 1
	if rest > half || (rest == half && f&(1<<drop) != 0) {
		f += 1 << drop
	}
	return int32(math.Float32frombits(f))
}

// substitutedOutput computes every tile with A's entries passed through
// round and the sum accumulated through acc.
func substitutedOutput(t *testing.T, p Params, round func(int32) int32, acc func(float32) float32) []byte {
	g, _ := NewGenerator(p)
	out := make([]byte, p.OutputBytes())
	tt, k := int(p.Tile), int(p.K)
	for idx := uint64(0); idx < p.Tiles(); idx++ {
		b, I, J := p.TilePos(idx)
		c := make([]int32, tt*tt)
		a, bc := make([]int32, k), make([]int32, k)
		for i := 0; i < tt; i++ {
			Line(g, MatA, b, I*p.Tile+uint32(i), a)
			for j := 0; j < tt; j++ {
				Line(g, MatB, b, J*p.Tile+uint32(j), bc)
				var s float32
				for q := range a {
					s = acc(s + float32(round(a[q]))*float32(bc[q]))
				}
				c[i*tt+j] = int32(s)
			}
		}
		EncodeTile(out[idx*uint64(p.TileBytes()):], c)
	}
	return out
}

// roundFP16 rounds a float32 to fp16's 11-bit significand (no overflow at
// these sizes), modelling an fp16 accumulator.
func roundFP16(x float32) float32 {
	return float32(roundTF32(int32(x)))
}

func TestPrecisionSubstitution(t *testing.T) {
	identity := func(x int32) int32 { return x }
	exact := func(x float32) float32 { return x }
	tests := []struct {
		name  string
		prec  Precision
		round func(int32) int32
		acc   func(float32) float32
	}{
		{"fp32 class computed with TF32 inputs", FP32, roundTF32, exact},
		{"fp16 class accumulated in fp16", FP16, identity, roundFP16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := bigParams(tt.prec, "substitute")
			r := commitRound(t, p, substitutedOutput(t, p, tt.round, tt.acc))
			_, tiles, proof := r.open(t)
			wantReason(t, r.tr.Verify(tiles, proof, nil), ReasonLowPrecision)
		})
	}
	// The same model without substitution is the honest output: the tests
	// above fail because of the substitution, not the model.
	p := bigParams(FP32, "substitute")
	if string(substitutedOutput(t, p, identity, exact)) != string(honestOutput(t, p)) {
		t.Fatal("fp32 model differs from the exact product")
	}
}

// SPEC.md §Exactness: fp16-class values are exact in bf16 (so bf16 gains
// nothing: same tensor-core rate) and every A row leaves int8's range (so
// int8 needs two passes, no faster than fp16).
func TestFP16ClassValueSet(t *testing.T) {
	p := bigParams(FP16, "x")
	g, _ := NewGenerator(p)
	a := make([]int32, 256)
	p.K = 256
	g.k = 256
	Line(g, MatA, 0, 0, a)
	outside := 0
	for _, x := range a {
		if x < -128 || x > 127 {
			outside++
		}
		if bf := math.Float32frombits(math.Float32bits(float32(x)) &^ 0xffff); int32(bf) != x {
			t.Fatalf("%d not exact in bf16", x)
		}
	}
	if outside < 64 {
		t.Fatalf("only %d of 256 A values outside int8", outside)
	}
}

func TestIdentityReuse(t *testing.T) {
	victim := bigParams(FP16, "victim")
	copier := bigParams(FP16, "copier")
	stolen := honestOutput(t, victim)
	victimRound := commitRound(t, victim, stolen)
	r := commitRound(t, copier, stolen)
	_, tiles, proof := r.open(t)
	others := func(root commit.CV) bool { return root == victimRound.tr.Root }
	wantReason(t, r.tr.Verify(tiles, proof, others), ReasonReusedOutput)
	// Without knowledge of the victim's root it still fails on values.
	wantReason(t, r.tr.Verify(tiles, proof, nil), ReasonWrongValues)
	// The victim, holding the same root, verifies.
	_, vt, vp := victimRound.open(t)
	if err := victimRound.tr.Verify(vt, vp, func(root commit.CV) bool { return root == r.tr.Root }); err != nil {
		t.Fatalf("victim rejected: %v", err)
	}
}

func TestTamperedResponses(t *testing.T) {
	p := bigParams(FP32, "m")
	r := commitRound(t, p, honestOutput(t, p))
	tests := []struct {
		name   string
		edit   func(idx []uint64, tiles [][]byte, proof commit.Proof) ([][]byte, commit.Proof)
		reason Reason
	}{
		{"tampered tile", func(_ []uint64, tiles [][]byte, pr commit.Proof) ([][]byte, commit.Proof) {
			tiles[3][100] ^= 0x10
			return tiles, pr
		}, ReasonProof},
		{"wrong-size tile", func(_ []uint64, tiles [][]byte, pr commit.Proof) ([][]byte, commit.Proof) {
			tiles[5] = tiles[5][:len(tiles[5])-4]
			return tiles, pr
		}, ReasonTileSize},
		{"proof for another index", func(idx []uint64, tiles [][]byte, _ commit.Proof) ([][]byte, commit.Proof) {
			other := append([]uint64(nil), idx...)
			other[0] = (idx[0] + 1) % p.Tiles()
			for contains(idx, other[0]) {
				other[0] = (other[0] + 1) % p.Tiles()
			}
			sortU64(other)
			pr, err := commit.Prove(r.leaves, other)
			if err != nil {
				t.Fatal(err)
			}
			return tiles, pr
		}, ReasonProof},
		{"missing tile", func(_ []uint64, tiles [][]byte, pr commit.Proof) ([][]byte, commit.Proof) {
			return tiles[1:], pr
		}, ReasonTileCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, tiles, proof := r.open(t)
			tiles, proof = tt.edit(idx, tiles, proof)
			wantReason(t, r.tr.Verify(tiles, proof, nil), tt.reason)
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		_, tiles, proof := r.open(t)
		tr := r.tr
		tr.Secret[0] ^= 1
		wantReason(t, tr.Verify(tiles, proof, nil), ReasonSecret)
	})
}

// A miner that commits consistently to one wrong value per tile is caught
// by Freivalds' check, not by the tree.
func TestSingleWrongValue(t *testing.T) {
	p := bigParams(FP16, "m")
	out := honestOutput(t, p)
	tb := p.TileBytes()
	for i := 0; i < int(p.Tiles()); i++ {
		out[i*tb+4*37]++ // element (2, 5) of every tile
	}
	r := commitRound(t, p, out)
	_, tiles, proof := r.open(t)
	err := r.tr.Verify(tiles, proof, nil)
	var f *Failure
	if !errors.As(err, &f) || (f.Reason != ReasonLowPrecision && f.Reason != ReasonWrongValues) {
		t.Fatalf("got %v", err)
	}
}

func contains(s []uint64, x uint64) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func sortU64(s []uint64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// CheckTile agrees with Verify tile by tile: the honest tiles pass, a
// zeroed one fails as not computed, and a wrong-sized or out-of-range tile
// is refused.
func TestCheckTile(t *testing.T) {
	p := bigParams(FP16, "m")
	out := honestOutput(t, p)
	tb := p.TileBytes()
	clear(out[3*tb : 4*tb])
	r := commitRound(t, p, out)
	tile := func(i int) []byte { return out[i*tb : (i+1)*tb] }
	for _, i := range []int{0, 1, 2, 5} {
		if err := CheckTile(p, r.tr.Root, r.tr.Secret, uint64(i), tile(i)); err != nil {
			t.Fatalf("honest tile %d: %v", i, err)
		}
	}
	wantReason(t, CheckTile(p, r.tr.Root, r.tr.Secret, 3, tile(3)), ReasonNotComputed)
	wantReason(t, CheckTile(p, r.tr.Root, r.tr.Secret, 0, tile(0)[1:]), ReasonTileSize)
	if err := CheckTile(p, r.tr.Root, r.tr.Secret, p.Tiles(), tile(0)); err == nil {
		t.Fatal("tile index past the output accepted")
	}
}
