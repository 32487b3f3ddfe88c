package proof

import (
	"encoding/binary"
	"fmt"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// Reason classifies a failed verification; each attack in SPEC.md §Attacks
// maps to one.
type Reason string

// Verification failure reasons.
const (
	ReasonSecret       Reason = "revealed secret does not match its commitment"
	ReasonSamples      Reason = "sample count out of range"
	ReasonTileCount    Reason = "wrong number of tiles"
	ReasonTileSize     Reason = "wrong tile size"
	ReasonProof        Reason = "tiles are not in the committed root"
	ReasonNotComputed  Reason = "tile not computed"
	ReasonLowPrecision Reason = "computed in a lower precision than the challenge asks"
	ReasonWrongValues  Reason = "tile values are not A·B"
	ReasonReusedOutput Reason = "output of another identity's challenge"
)

// Failure is a verification verdict against the miner.
type Failure struct {
	Reason Reason
	Tile   int64 // tile index, or -1 when no single tile is at fault
	Detail string
}

func (f *Failure) Error() string {
	if f.Tile < 0 {
		return fmt.Sprintf("%s: %s", f.Reason, f.Detail)
	}
	return fmt.Sprintf("tile %d: %s: %s", f.Tile, f.Reason, f.Detail)
}

func fail(r Reason, tile int64, format string, args ...any) *Failure {
	return &Failure{Reason: r, Tile: tile, Detail: fmt.Sprintf(format, args...)}
}

// Transcript is a round as a third party sees it: the challenge, the
// commitment to the sampling secret, the miner's root and the revealed secret.
// It is all an auditor needs to re-derive the sample and the verdict.
type Transcript struct {
	Params           Params
	SecretCommitment [32]byte
	Root             commit.CV
	Secret           [32]byte
	Samples          int // k, the number of tiles to open
}

// Indices checks the revealed secret and derives the sampled tile indices.
func (t *Transcript) Indices() ([]uint64, error) {
	if err := t.Params.Validate(); err != nil {
		return nil, err
	}
	if sample.Commit(t.Secret) != t.SecretCommitment {
		return nil, fail(ReasonSecret, -1, "commitment %x", t.SecretCommitment[:8])
	}
	if t.Samples < 1 || t.Samples > commit.MaxIndices {
		return nil, fail(ReasonSamples, -1, "%d, want 1..%d", t.Samples, commit.MaxIndices)
	}
	enc, _ := t.Params.MarshalBinary()
	return sample.Indices(t.Secret, t.Root, enc, t.Params.Tiles(), t.Samples), nil
}

// Verify checks the opened tiles, in the order Indices returns, and their
// batch proof. otherRoot, if not nil, says whether another identity
// committed a root: a root so committed whose tiles fail is a copy of its
// output. A nil error means every sampled tile is in the root and equals
// A·B exactly.
func (t *Transcript) Verify(tiles [][]byte, proof commit.Proof, otherRoot func(commit.CV) bool) error {
	return t.Check(tiles, proof, otherRoot).Err
}

// Result is a verification's outcome.
type Result struct {
	Err error // the verdict: nil when verified, else usually a *Failure
	// Tiles holds each sampled tile's outcome in sample order (nil entries
	// passed); it is nil when the round failed before tiles were checked.
	Tiles []*Failure
}

// Check is Verify with the outcome of every sampled tile, for evidence.
func (t *Transcript) Check(tiles [][]byte, proof commit.Proof, otherRoot func(commit.CV) bool) Result {
	idx, err := t.Indices()
	if err != nil {
		return Result{Err: err}
	}
	return t.check(idx, tiles, proof, otherRoot)
}

// check verifies tiles against the sample idx.
func (t *Transcript) check(idx []uint64, tiles [][]byte, proof commit.Proof, otherRoot func(commit.CV) bool) Result {
	if len(tiles) != len(idx) {
		return Result{Err: fail(ReasonTileCount, -1, "got %d, want %d", len(tiles), len(idx))}
	}
	p := t.Params
	leaves := make([]commit.CV, len(idx))
	for i, tile := range tiles {
		if len(tile) != p.TileBytes() {
			return Result{Err: fail(ReasonTileSize, int64(idx[i]), "%d bytes, want %d", len(tile), p.TileBytes())}
		}
		leaves[i] = commit.TileCV(tile, idx[i])
	}
	if err := commit.Verify(t.Root, p.Tiles(), idx, leaves, proof); err != nil {
		return Result{Err: fail(ReasonProof, -1, "%v", err)}
	}
	g, err := NewGenerator(p)
	if err != nil {
		return Result{Err: err}
	}
	// Tiles are checked in parallel, beside other verifications' tiles, in
	// groups that share their rows of A; the verdict names the lowest failing
	// index so it does not depend on scheduling.
	fails := make([]*Failure, len(tiles))
	groups := shareGroups(p, idx)
	tilePool.run(len(groups), func(k int) {
		grp := groups[k]
		ids, cs, rs := make([]uint64, len(grp)), make([][]int32, len(grp)), make([][]uint64, len(grp))
		for j, i := range grp {
			ids[j], cs[j], rs[j] = idx[i], DecodeTile(tiles[i]), t.freivaldsVector(idx[i])
		}
		for j, f := range checkShared(g, p, ids, cs, rs) {
			fails[grp[j]] = f
		}
	})
	res := Result{Tiles: fails}
	for _, f := range fails {
		if f != nil {
			if otherRoot != nil && otherRoot(t.Root) {
				f.Reason, f.Detail = ReasonReusedOutput, "root also committed by another miner; "+f.Detail
			}
			if res.Err == nil {
				res.Err = f
			}
		}
	}
	return res
}

// CheckTile is the exactness check CheckTiles runs on each tile after the
// inclusion proof: nil when tile idx of p (under root, sampled with secret)
// equals A·B. An audit re-checks a stored wrong tile with it once it has
// verified the tile's inclusion itself.
func CheckTile(p Params, root commit.CV, secret [32]byte, idx uint64, tile []byte) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if idx >= p.Tiles() {
		return fmt.Errorf("tile %d of %d", idx, p.Tiles())
	}
	if len(tile) != p.TileBytes() {
		return fail(ReasonTileSize, int64(idx), "%d bytes, want %d", len(tile), p.TileBytes())
	}
	g, err := NewGenerator(p)
	if err != nil {
		return err
	}
	t := Transcript{Params: p, Root: root, Secret: secret}
	if f := checkTile(g, p, idx, DecodeTile(tile), t.freivaldsVector(idx)); f != nil {
		return f
	}
	return nil
}

// diagnose recomputes one failing row exactly and names the likely cause:
// nothing computed, rounding-sized errors (a lower precision), or other.
func diagnose(idx uint64, i int, got, arow, bcols []int32, k int) *Failure {
	zero, near := true, true
	first := -1
	var want0 int64
	for j, x := range got {
		var want, scale int64
		for q, a := range arow {
			bv := int64(bcols[j*k+q])
			want += int64(a) * bv
			scale += abs(int64(a) * bv)
		}
		zero = zero && x == 0
		if d := abs(int64(x) - want); d != 0 {
			// fp16/bf16/TF32 input rounding or a short accumulator moves a
			// sum by far less than 1/128 of its absolute-value sum.
			near = near && 128*d <= scale
			if first < 0 {
				first, want0 = j, want
			}
		}
	}
	tile := int64(idx)
	if first < 0 {
		// Freivalds disagreed but the row is exact: impossible unless the
		// inputs to the check were inconsistent; report it plainly.
		return fail(ReasonWrongValues, tile, "row %d fails the check but matches A·B", i)
	}
	detail := fmt.Sprintf("row %d col %d is %d, A·B gives %d", i, first, got[first], want0)
	switch {
	case zero:
		return fail(ReasonNotComputed, tile, "row %d is all zeros", i)
	case near:
		return fail(ReasonLowPrecision, tile, "%s (rounding-sized errors)", detail)
	}
	return fail(ReasonWrongValues, tile, "%s", detail)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// DecodeTile reads a serialised tile: little-endian int32s, row-major.
func DecodeTile(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// EncodeTile serialises tile values as little-endian int32s.
func EncodeTile(dst []byte, c []int32) {
	for i, x := range c {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(x))
	}
}

// ReferenceTile computes tile idx exactly with a naive product; tests and
// diagnostics use it, miners use a kernels.Backend.
func ReferenceTile(g *Generator, p Params, idx uint64) []int32 {
	t, k := int(p.Tile), int(p.K)
	b, I, J := p.TilePos(idx)
	bcols := make([]int32, t*k)
	for col := 0; col < t; col++ {
		Line(g, MatB, b, J*p.Tile+uint32(col), bcols[col*k:(col+1)*k])
	}
	out := make([]int32, t*t)
	arow := make([]int32, k)
	for i := 0; i < t; i++ {
		Line(g, MatA, b, I*p.Tile+uint32(i), arow)
		for j := 0; j < t; j++ {
			var s int32
			for q, a := range arow {
				s += a * bcols[j*k+q]
			}
			out[i*t+j] = s
		}
	}
	return out
}

// VerifyOps counts a validator's work for k sampled tiles: one operation per
// generated input element (2·t·K) plus two per multiply-add of Freivalds'
// check (2·t·K + t²). Compare with Params.FLOPs.
func VerifyOps(p Params, k int) float64 {
	t, kk := float64(p.Tile), float64(p.K)
	return float64(k) * (2*t*kk + 2*(2*t*kk+t*t))
}
