// Package sample owns which output tiles a validator opens: the sample size
// for a stated detection target, the commit-reveal secret that stops a miner
// from grinding its root against the sample, and the deterministic derivation
// of indices from secret and root that anyone can repeat.
package sample

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/pog-network/pog/internal/kdf"
	"lukechampine.com/blake3"
)

// Defaults: catch a miner that fakes at least 10% of its tiles with
// probability at least 99.9%.
const (
	DefaultFraction    = 0.10
	DefaultProbability = 0.999
)

// PPM is the resolution of Count's inputs: parts per million.
const PPM = 1_000_000

// MaxCount is the largest sample Count sizes (the most indices a round
// record holds, store.MaxSamples); a target needing more is refused.
const MaxCount = 4096

// Count returns the number of tiles k to sample so that a miner faking at
// least a fraction f of tiles is caught with probability at least target:
// the smallest k with (1-f)^k <= 1-target, capped at tiles (then every tile
// is opened and detection is certain). Sampling without replacement only
// raises the probability; DetectProbability gives the exact figure.
//
// f and target must be whole parts per million (at most six decimals) and
// the inequality is decided in integers (SPEC §8.2), so every
// implementation finds the same k:
// in floating point (1-0.1)^2 > 1-0.19, while exactly they are equal.
func Count(f, target float64, tiles uint64) (int, error) {
	if !(f > 0 && f < 1) || !(target > 0 && target < 1) {
		return 0, fmt.Errorf("fraction %v and probability %v must both be in (0, 1)", f, target)
	}
	fp, pp := math.Round(f*PPM), math.Round(target*PPM)
	// A value between two whole ppm would round differently in decimal and
	// binary arithmetic: refuse it rather than guess.
	whole := math.Abs(f*PPM-fp) < 1e-3 && math.Abs(target*PPM-pp) < 1e-3
	if !whole || fp < 1 || fp >= PPM || pp < 1 || pp >= PPM {
		return 0, fmt.Errorf("fraction %v and probability %v must both be whole parts per million in (0, 1)", f, target)
	}
	k, ok := countPPM(uint64(fp), uint64(pp), min(tiles, MaxCount))
	if !ok {
		if tiles <= MaxCount {
			return int(tiles), nil
		}
		return 0, fmt.Errorf("fraction %v at probability %v needs more than %d samples", f, target, MaxCount)
	}
	return k, nil
}

// countPPM is the smallest k in 1..limit with (D-F)^k·D <= (D-Q)·D^k for
// D = PPM, that is ((D-F)/D)^k <= (D-Q)/D, and whether there is one.
func countPPM(fp, pp, limit uint64) (int, bool) {
	d := new(big.Int).SetUint64(PPM)
	miss := new(big.Int).SetUint64(PPM - fp)
	lhs := new(big.Int).Mul(miss, d)                           // (D-F)^k · D
	rhs := new(big.Int).Mul(new(big.Int).SetUint64(PPM-pp), d) // (D-Q) · D^k
	for k := uint64(1); k <= limit; k++ {
		if lhs.Cmp(rhs) <= 0 {
			return int(k), true
		}
		lhs.Mul(lhs, miss)
		rhs.Mul(rhs, d)
	}
	return 0, false
}

// DetectProbability is the exact chance that k tiles sampled without
// replacement from tiles include at least one of ceil(f·tiles) faked ones.
func DetectProbability(k int, f float64, tiles uint64) float64 {
	bad := uint64(math.Ceil(f * float64(tiles)))
	miss := 1.0
	for i := uint64(0); i < uint64(k); i++ {
		if bad+i >= tiles {
			return 1
		}
		miss *= float64(tiles-bad-i) / float64(tiles-i)
	}
	return 1 - miss
}

// Domain-separation contexts (BLAKE3 derive-key).
const (
	commitContext  = "pog 2026-11-29 sampling secret commitment v1"
	indicesContext = "pog 2026-11-29 sample indices v1"
)

var (
	commitKDF  = kdf.New(commitContext)
	indicesKDF = kdf.New(indicesContext)
)

// Commit returns the commitment to secret carried in a challenge.
func Commit(secret [32]byte) [32]byte {
	return commitKDF.Sum(secret[:])
}

// Indices derives k distinct tile indices in [0, tiles), sorted ascending,
// from the revealed secret, the miner's root and the challenge's encoded
// parameters. Values are read as little-endian uint64s from a keyed BLAKE3
// XOF, rejection-sampled to avoid modulo bias, duplicates skipped.
func Indices(secret, root [32]byte, params []byte, tiles uint64, k int) []uint64 {
	if uint64(k) >= tiles {
		all := make([]uint64, tiles)
		for i := range all {
			all[i] = uint64(i)
		}
		return all
	}
	key := indicesKDF.Sum(secret[:], root[:], params)
	xof := blake3.New(32, key[:]).XOF()
	limit := math.MaxUint64 - math.MaxUint64%tiles // values >= limit are rejected
	seen := make(map[uint64]bool, k)
	out := make([]uint64, 0, k)
	var buf [8]byte
	for len(out) < k {
		xof.Read(buf[:])
		x := binary.LittleEndian.Uint64(buf[:])
		if x >= limit {
			continue
		}
		if i := x % tiles; !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}
