package proof

import (
	"encoding/binary"
	"fmt"

	"github.com/pog-network/pog/internal/kdf"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// Domain-separation contexts of the round chain (SPEC.md §8.4).
const (
	stepNonceContext  = "pog 2026-12-01 step nonce v1"
	beaconContext     = "pog 2026-12-01 step beacon v1"
	stepDigestContext = "pog 2026-12-01 step digest v1"
	roundDigestCtx    = "pog 2026-12-01 round digest v1"
)

var (
	stepNonceKDF   = kdf.New(stepNonceContext)
	beaconKDF      = kdf.New(beaconContext)
	stepDigestKDF  = kdf.New(stepDigestContext)
	roundDigestKDF = kdf.New(roundDigestCtx)
)

// MaxSteps bounds the steps of one round; MaxRoundRoots bounds steps ×
// sub-challenges, so a commitment with every root stays one small gossip
// message.
const (
	MaxSteps      = 256
	MaxRoundRoots = 256
)

// Beacon is the validator's answer to step j's root: a PRF of the sampling
// secret, so nobody can predict it before the validator sends it, and
// anyone can check it once the secret is revealed.
func Beacon(secret [32]byte, j int) [32]byte {
	return beaconKDF.Sum(secret[:], binary.BigEndian.AppendUint32(nil, uint32(j)))
}

// StepDigest binds one step's roots, in sub-challenge order.
func StepDigest(roots []commit.CV) [32]byte {
	m := make([]byte, 0, 32*len(roots))
	for _, r := range roots {
		m = append(m, r[:]...)
	}
	return stepDigestKDF.Sum(m)
}

// StepNonce is the nonce of sub-challenge sub in step i ≥ 1: it depends on
// the challenge, the previous step's digest (so steps run one after another)
// and the beacon answering step i−2 (zero for i = 1), so a miner can run at
// most one step ahead of what the validator has seen.
func StepNonce(challengeID [32]byte, i, sub int, prevDigest, beacon [32]byte) [32]byte {
	var steps [8]byte
	binary.BigEndian.PutUint32(steps[:4], uint32(i))
	binary.BigEndian.PutUint32(steps[4:], uint32(sub))
	return stepNonceKDF.Sum(challengeID[:], steps[:], prevDigest[:], beacon[:])
}

// Chain is a round's parameters as everyone derives them: the challenge's
// template (one Params per sub-challenge, whose nonces are step 0's) and
// its ID, the step count and the roots committed so far, step-major.
type Chain struct {
	ID       [32]byte
	Template []Params
	Steps    int
}

// Subs is the number of sub-challenges of every step.
func (c *Chain) Subs() int { return len(c.Template) }

// Validate checks the chain's shape bounds.
func (c *Chain) Validate() error {
	switch {
	case len(c.Template) < 1:
		return fmt.Errorf("chain: no sub-challenges")
	case c.Steps < 1 || c.Steps > MaxSteps:
		return fmt.Errorf("chain: %d steps, want 1..%d", c.Steps, MaxSteps)
	case c.Steps*len(c.Template) > MaxRoundRoots:
		return fmt.Errorf("chain: %d steps × %d sub-challenges exceed %d roots", c.Steps, len(c.Template), MaxRoundRoots)
	}
	for _, p := range c.Template {
		if p.Tiles() != c.Template[0].Tiles() || p.TileBytes() != c.Template[0].TileBytes() {
			return fmt.Errorf("chain: sub-challenges differ in shape")
		}
	}
	return nil
}

// StepParams returns the parameters of step i given the roots of steps
// before it (roots[j] is step j's roots) and the beacons received (beacons[j]
// answers step j). Step i needs roots[i−1] and, for i ≥ 2, beacons[i−2].
func (c *Chain) StepParams(i int, roots [][]commit.CV, beacons [][32]byte) ([]Params, error) {
	if i == 0 {
		return c.Template, nil
	}
	if i >= c.Steps || len(roots) < i || (i >= 2 && len(beacons) < i-1) {
		return nil, fmt.Errorf("chain: step %d not derivable from %d roots and %d beacons", i, len(roots), len(beacons))
	}
	var beacon [32]byte
	if i >= 2 {
		beacon = beacons[i-2]
	}
	prev := StepDigest(roots[i-1])
	out := make([]Params, len(c.Template))
	for s, p := range c.Template {
		p.Nonce = StepNonce(c.ID, i, s, prev, beacon)
		out[s] = p
	}
	return out, nil
}

// TilesPerStep is sub-challenges × tiles of each.
func (c *Chain) TilesPerStep() uint64 { return uint64(len(c.Template)) * c.Template[0].Tiles() }

// Tiles is every tile of the round: Steps × TilesPerStep. Global tile g is
// tile g mod T of sub-challenge (g div T) mod S of step g div (S·T).
func (c *Chain) Tiles() uint64 { return uint64(c.Steps) * c.TilesPerStep() }

// Locate splits a global tile index.
func (c *Chain) Locate(g uint64) (step, sub int, tile uint64) {
	per, t := c.TilesPerStep(), c.Template[0].Tiles()
	return int(g / per), int(g % per / t), g % t
}

// Group is the sampled tiles of one step's sub-challenge: what one batch
// proof covers.
type Group struct {
	Step, Sub int
	Tiles     []uint64 // indices within the sub-challenge, ascending
	First     int      // position of its first tile in the round's sample
}

// Groups splits a sorted global sample into per-(step, sub) groups, in order.
func (c *Chain) Groups(global []uint64) []Group {
	var out []Group
	for i, g := range global {
		st, sub, t := c.Locate(g)
		if n := len(out); n == 0 || out[n-1].Step != st || out[n-1].Sub != sub {
			out = append(out, Group{Step: st, Sub: sub, First: i})
		}
		out[len(out)-1].Tiles = append(out[len(out)-1].Tiles, t)
	}
	return out
}

// RoundDigest binds every root of the round, step-major.
func RoundDigest(roots [][]commit.CV) [32]byte {
	var m []byte
	for _, step := range roots {
		for _, r := range step {
			m = append(m, r[:]...)
		}
	}
	return roundDigestKDF.Sum(m)
}

// Sample draws k global tile indices over the whole round from the revealed
// secret, the digest of every root and the challenge ID, after checking the
// secret against its commitment.
func (c *Chain) Sample(secret, commitment [32]byte, roots [][]commit.CV, k int) ([]uint64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(roots) != c.Steps {
		return nil, fmt.Errorf("chain: %d steps of roots, want %d", len(roots), c.Steps)
	}
	if sample.Commit(secret) != commitment {
		return nil, fail(ReasonSecret, -1, "commitment %x", commitment[:8])
	}
	if k < 1 || k > commit.MaxIndices {
		return nil, fail(ReasonSamples, -1, "%d, want 1..%d", k, commit.MaxIndices)
	}
	d := RoundDigest(roots)
	return sample.Indices(secret, d, c.ID[:], c.Tiles(), k), nil
}

// CheckTiles verifies the sampled tiles of one (step, sub) group: inclusion
// under root, then exactness. It is Transcript.Check with the sample given.
func CheckTiles(p Params, root commit.CV, secret [32]byte, idx []uint64, tiles [][]byte, pr commit.Proof, otherRoot func(commit.CV) bool) Result {
	t := Transcript{Params: p, Root: root, Secret: secret}
	return t.check(idx, tiles, pr, otherRoot)
}
