// Package consensus turns one epoch of validators' weights over miners into
// incentives, validator trust, bonds and dividends, following Bittensor's Yuma
// consensus. It is a pure function of its inputs: no I/O, no clock, no
// randomness, and every node that feeds it the same records gets the same
// bits back, which Result.Hash lets nodes check.
//
// # The computation
//
// Let A be the active validators: those present in Input.Weights whose stake
// is at least Params.MinStake (a validator that published nothing is absent
// and inactive; one that published an empty or all-zero vector is active and
// its stake counts). Miners are every miner with a positive weight from an
// active validator or a positive previous bond.
//
//  1. Stake: S_i = stake_i / Σ_{k∈A} stake_k for i ∈ A, 0 otherwise.
//     Weights: W_ij = w_ij / Σ_j w_ij; an all-zero row stays zero.
//  2. Consensus: C_j = max{ v : Σ_{i∈A, W_ij ≥ v} stake_i ≥ κ·Σ_{k∈G} stake_k },
//     where G is the whole stake set (every validator in Input.Stakes with
//     stake at least MinStake), published or not: the κ-stake-weighted
//     median of column j with absent validators voting zero (κ = 0.5 gives
//     the weighted median; zeros count, so a validator that did not weight
//     j, or did not publish, pulls C_j down). Measuring the threshold
//     against G rather than A means a node that lacks some records cannot
//     let the validators it did hear from set consensus with less than κ of
//     the stake. Ties at exactly κ go to the higher value, as in subtensor:
//     a coalition holding exactly κ of the stake sets C_j.
//  3. Clipping: W̄_ij = min(W_ij, C_j).
//  4. Rank R_j = Σ_i S_i·W̄_ij; incentive I_j = R_j / Σ_j R_j (all 0 if Σ R = 0).
//  5. Trust T_i = Σ_j W̄_ij / Σ_j W_ij, the share of i's weight that survives
//     clipping (0 for inactive or all-zero validators). Agreement = Σ_i S_i·T_i,
//     the stake-weighted share of all weight that survived (equal to Σ_j R_j).
//  6. Bonds: ΔB_ij = S_i·W̄_ij / Σ_k S_k·W̄_kj (0 for a column with no clipped
//     weight), B_ij = α·ΔB_ij + (1−α)·B_prev_ij for every validator, active or
//     not, so bonds of an absent validator or an unweighted miner decay by
//     (1−α) per epoch. Dividends D_i = Σ_j B_ij·I_j, normalised to sum 1
//     (all 0 if the sum is 0). By default, and unlike subtensor, the EMA
//     bonds are not column-normalised again: a new miner's column sums to
//     α and grows as 1−(1−α)^t, so validators weighting new miners earn
//     less at first, and within a young column the latest ΔB outweighs its
//     history. Params.NormalizeBonds applies subtensor's
//     B_ij ← B_ij / Σ_k B_kj after the EMA.
//
// Security: a coalition holding less than κ of the stake set cannot meet
// the threshold alone, so every C_j is at most some other validator's W_ij:
// weight it puts on a miner nobody else weights is clipped to zero and costs
// it trust and dividends, and it can lift C_j only towards what others
// already give. With κ = 0.5 that tolerates just under half of the stake
// being dishonest; at exactly half both sides keep their weights (step 2),
// and above half the coalition sets consensus alone.
//
// # Determinism
//
// Validators and miners are sorted by ID (byte-wise) and every sum runs in
// that order, so neither map iteration order nor the order inputs were built
// in can change a bit. Every product that feeds a sum is wrapped in an
// explicit float64 conversion: the Go spec lets compilers fuse x*y+z into one
// FMA (they do on arm64, ppc64le, s390x and riscv64), which would make results
// differ by architecture; the conversion forbids that. The consensus
// threshold compares sums of raw stakes, so with integer stakes below 2^53
// the median test is exact. Zero weights and zero bonds are the same as
// absent ones, and -0 is read as +0, so equivalent inputs hash alike.
package consensus

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
)

// Params are the consensus constants; every field enters Result.Hash.
type Params struct {
	// Kappa is the stake share that must support a weight for it to count
	// as consensus, in (0, 1]. 0.5 is the stake-weighted median.
	Kappa float64
	// BondAlpha is the EMA rate of bonds, in (0, 1].
	BondAlpha float64
	// MinStake is the stake floor: validators with less stake than this are
	// treated as not having submitted. 0 disables it.
	MinStake float64
	// NormalizeBonds column-normalises the EMA bonds, as subtensor does, so
	// that every bonded miner's column sums to 1: a new miner's bonds count
	// in full from its first epoch instead of growing as 1−(1−α)^t.
	NormalizeBonds bool
}

// DefaultParams are Bittensor's defaults: κ = 0.5, α = 0.1, no stake floor.
func DefaultParams() Params { return Params{Kappa: 0.5, BondAlpha: 0.1} }

// ErrInvalid is wrapped by every error Compute returns for bad input.
var ErrInvalid = errors.New("consensus: invalid input")

// Validate reports whether p is usable.
func (p Params) Validate() error {
	// Written as !(in range) so that NaN fails too.
	if !(p.Kappa > 0 && p.Kappa <= 1) {
		return fmt.Errorf("%w: kappa %v outside (0, 1]", ErrInvalid, p.Kappa)
	}
	if !(p.BondAlpha > 0 && p.BondAlpha <= 1) {
		return fmt.Errorf("%w: bond alpha %v outside (0, 1]", ErrInvalid, p.BondAlpha)
	}
	if !(p.MinStake >= 0) || math.IsInf(p.MinStake, 1) {
		return fmt.Errorf("%w: min stake %v is not a finite non-negative number", ErrInvalid, p.MinStake)
	}
	return nil
}

// Input is one epoch's records.
type Input struct {
	// Stakes maps every validator ID to its stake (from genesis). It must be
	// non-empty; stakes must be finite and non-negative.
	Stakes map[string]float64
	// Weights maps validator → miner → weight for the validators that
	// published this epoch. Weights need not be normalised; they must be
	// finite and non-negative, and every validator must be in Stakes.
	Weights map[string]map[string]float64
	// PrevBonds is the previous epoch's Result.BondsMap(); nil at the start.
	// Bonds must lie in [0, 1] and every validator must be in Stakes.
	PrevBonds map[string]map[string]float64
}

// Result is one epoch's consensus. Slices are indexed like Miners or
// Validators; matrices are [validator][miner].
type Result struct {
	Params Params
	// InputHash is SHA-256 over the canonical form of the Input (sorted
	// IDs, float bits, zero entries dropped, -0 as +0). Rounding maps many
	// nearby inputs to the same outputs, so this is what makes Hash commit
	// to the records themselves: equal Hash means equal records and equal
	// outcome.
	InputHash [32]byte

	Miners     []string // sorted
	Validators []string // sorted; every validator in Input.Stakes

	// By miner.
	Consensus []float64 // C_j
	Rank      []float64 // R_j
	Incentive []float64 // I_j, sums to 1 unless all zero

	// By validator.
	Active    []bool    // counted in this epoch's consensus
	Stake     []float64 // S_i, normalised over active validators
	Trust     []float64 // T_i
	Dividends []float64 // D_i, sums to 1 unless all zero

	// Agreement is Σ_i S_i·T_i.
	Agreement float64

	Clipped [][]float64 // W̄_ij; zero rows for inactive validators
	Bonds   [][]float64 // B_ij; feed BondsMap() to the next epoch
}

// Compute runs one epoch of Yuma consensus; see the package comment for the
// formulas. It does not modify in. Each phase below is one step of the
// package comment, and keeps its summation order and float64 conversions.
func Compute(p Params, in Input) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// One pass in map order checks every rule and collects every miner with
	// a positive weight or bond. Only if it finds a problem does the sorted
	// scan in firstError run, so that every node reports the same error.
	union, ok := scan(in)
	if !ok {
		return nil, firstError(in)
	}
	d := scatter(in, union)
	active, miners, cols := d.activeMiners(p.MinStake)
	total, err := activeStake(d.stake, active)
	if err != nil {
		return nil, err
	}
	r := newResult(p, d, active, miners, total)
	W, err := d.normalizedWeights(active, cols)
	if err != nil {
		return nil, err
	}
	if err := r.consensus(d.stake, W, total); err != nil {
		return nil, err
	}
	r.clipAndRank(W)
	r.trust(W)
	r.updateBonds(d.rawB, cols)
	r.dividends()
	return r, nil
}

// dense is the input over sorted IDs: stakes by validator, and weight and
// bond rows over the sorted union of miners, so that walking a row walks
// IDs in order.
type dense struct {
	vals       []string  // sorted; every validator in Input.Stakes
	stake      []float64 // raw stakes, -0 read as +0
	all        []string  // sorted miners with a positive weight or bond
	submitted  []bool    // the validator published weights (maybe none)
	rawW, rawB [][]float64
}

// scatter sorts the IDs once and scatters the positive entries of the
// weight and bond rows into dense [validator][miner] matrices over union,
// filling in union's sorted positions.
func scatter(in Input, union map[string]int) *dense {
	vals := sortedKeys(in.Stakes)
	nv := len(vals)
	vidx := make(map[string]int, nv)
	d := &dense{vals: vals, stake: make([]float64, nv), all: sortedKeys(union), submitted: make([]bool, nv)}
	for i, id := range vals {
		vidx[id] = i
		d.stake[i] = in.Stakes[id] + 0 // -0 → +0
	}
	for k, m := range d.all {
		union[m] = k
	}
	d.rawW, d.rawB = matrix(nv, len(d.all)), matrix(nv, len(d.all))
	for _, c := range []struct {
		rows map[string]map[string]float64
		dst  [][]float64
	}{{in.Weights, d.rawW}, {in.PrevBonds, d.rawB}} {
		for id, row := range c.rows {
			i := vidx[id]
			for m, x := range row {
				if x > 0 {
					c.dst[i][union[m]] = x
				}
			}
		}
	}
	for id := range in.Weights {
		d.submitted[vidx[id]] = true
	}
	return d
}

// inputHash digests the canonical input: stakes; submitted rows (an empty
// row is still a submission); rows with a positive bond (an empty one
// means nothing).
func (d *dense) inputHash() [32]byte {
	digest := newEncoder(inputDomain)
	digest.u64(uint64(len(d.vals)))
	for i, id := range d.vals {
		digest.str(id)
		digest.f64(d.stake[i])
	}
	digestRows(digest, d.vals, d.all, d.rawW, func(i int) bool { return d.submitted[i] })
	digestRows(digest, d.vals, d.all, d.rawB, func(i int) bool { return slices.ContainsFunc(d.rawB[i], positive) })
	return digest.sum()
}

// activeMiners marks the active validators (published, with stake at
// least minStake) and returns the miners they or any bond mention, each
// with its index in the union.
func (d *dense) activeMiners(minStake float64) (active []bool, miners []string, cols []int) {
	active = make([]bool, len(d.vals))
	inUse := make([]bool, len(d.all))
	for i := range d.vals {
		active[i] = d.submitted[i] && d.stake[i] >= minStake
		for k := range d.all {
			if (active[i] && d.rawW[i][k] > 0) || d.rawB[i][k] > 0 {
				inUse[k] = true
			}
		}
	}
	for k, m := range d.all {
		if inUse[k] {
			miners = append(miners, m)
			cols = append(cols, k)
		}
	}
	return active, miners, cols
}

// activeStake is step 1's total active stake, summed in validator order.
// With none, no validator stays active: no consensus this epoch (bonds
// still decay).
func activeStake(stake []float64, active []bool) (float64, error) {
	var total float64
	for i := range stake {
		if active[i] {
			total += stake[i]
		}
	}
	if math.IsInf(total, 1) {
		return 0, fmt.Errorf("%w: total active stake overflows", ErrInvalid)
	}
	if total == 0 {
		clear(active)
	}
	return total, nil
}

// newResult holds the sorted IDs, the input's hash and the active set, and
// step 1's stake shares S_i.
func newResult(p Params, d *dense, active []bool, miners []string, total float64) *Result {
	nv, nm := len(d.vals), len(miners)
	r := &Result{
		Params:     p,
		InputHash:  d.inputHash(),
		Miners:     miners,
		Validators: d.vals,
		Consensus:  make([]float64, nm),
		Rank:       make([]float64, nm),
		Incentive:  make([]float64, nm),
		Active:     active,
		Stake:      make([]float64, nv),
		Trust:      make([]float64, nv),
		Dividends:  make([]float64, nv),
		Clipped:    matrix(nv, nm),
		Bonds:      matrix(nv, nm),
	}
	for i := range d.vals {
		if active[i] {
			r.Stake[i] = d.stake[i] / total
		}
	}
	return r
}

// normalizedWeights is step 1's W: each active validator's weights over
// the active miners (cols), divided by their sum taken in miner order.
func (d *dense) normalizedWeights(active []bool, cols []int) ([][]float64, error) {
	W := matrix(len(d.vals), len(cols))
	for i, id := range d.vals {
		if !active[i] {
			continue
		}
		row := W[i]
		for j, k := range cols {
			row[j] = d.rawW[i][k]
		}
		var sum float64
		for _, w := range row {
			sum += w
		}
		if math.IsInf(sum, 1) {
			return nil, fmt.Errorf("%w: weights of validator %q overflow", ErrInvalid, id)
		}
		if sum > 0 {
			for j := range row {
				row[j] /= sum
			}
		}
	}
	return W, nil
}

// consensus is step 2: C_j per miner over every validator with stake at
// least the floor, whether it published or not. The threshold is a share
// of the whole stake set, so that validators missing on one node cannot
// let a minority set consensus. An absent validator's row is zero (W is
// zero for inactive rows); a zero-stake vote can neither reach the
// threshold nor block it. With no active stake (total 0) C stays zero.
func (r *Result) consensus(stake []float64, W [][]float64, total float64) error {
	var voters []int
	var voterStake []float64
	var setStake float64
	for i := range stake {
		if stake[i] > 0 && stake[i] >= r.Params.MinStake {
			voters = append(voters, i)
			voterStake = append(voterStake, stake[i])
			setStake += stake[i]
		}
	}
	if math.IsInf(setStake, 1) {
		return fmt.Errorf("%w: total stake overflows", ErrInvalid)
	}
	if total == 0 {
		return nil
	}
	threshold := r.Params.Kappa * setStake
	col := make([]float64, len(voters))
	scratch := make([]int, len(voters))
	for j := range r.Miners {
		for k, i := range voters {
			col[k] = W[i][j]
		}
		r.Consensus[j] = weightedMedian(col, voterStake, threshold, scratch)
	}
	return nil
}

// clipAndRank is steps 3 and 4: W̄_ij = min(W_ij, C_j), and R_j
// accumulated in validator order, then I_j.
func (r *Result) clipAndRank(W [][]float64) {
	for i := range r.Validators {
		if !r.Active[i] {
			continue
		}
		for j, c := range r.Consensus {
			w := W[i][j]
			if w > c {
				w = c
			}
			r.Clipped[i][j] = w
			r.Rank[j] += float64(r.Stake[i] * w)
		}
	}
	r.Incentive = normalized(r.Rank, r.Incentive)
}

// trust is step 5: T_i and the agreement Σ_i S_i·T_i.
func (r *Result) trust(W [][]float64) {
	for i := range r.Validators {
		if !r.Active[i] {
			continue
		}
		var sw, sc float64
		for j := range r.Miners {
			sw += W[i][j]
			sc += r.Clipped[i][j]
		}
		if sw > 0 {
			r.Trust[i] = sc / sw
		}
		r.Agreement += float64(r.Stake[i] * r.Trust[i])
	}
}

// updateBonds is step 6's bonds: every validator's previous bonds (rawB,
// over the union; cols maps the active miners into it) decay by 1−α, an
// active validator's gain α·ΔB_ij, where ΔB_ij is its share of
// colSum_j = Σ_i S_i·W̄_ij (summed in validator order); then, with
// NormalizeBonds, each column is divided by its sum.
func (r *Result) updateBonds(rawB [][]float64, cols []int) {
	S := r.Stake
	colSum := make([]float64, len(r.Miners))
	for i := range r.Validators {
		if !r.Active[i] {
			continue
		}
		for j := range r.Miners {
			colSum[j] += float64(S[i] * r.Clipped[i][j])
		}
	}
	alpha, keep := r.Params.BondAlpha, 1-r.Params.BondAlpha
	for i := range r.Validators {
		bi := r.Bonds[i]
		for j, k := range cols {
			bi[j] = float64(keep * rawB[i][k])
		}
		if r.Active[i] {
			for j := range r.Miners {
				if colSum[j] > 0 {
					delta := float64(S[i]*r.Clipped[i][j]) / colSum[j]
					bi[j] = float64(alpha*delta) + bi[j]
				}
			}
		}
	}
	if r.Params.NormalizeBonds {
		bondSum := make([]float64, len(r.Miners))
		for i := range r.Validators {
			for j, b := range r.Bonds[i] {
				bondSum[j] += b
			}
		}
		for i := range r.Validators {
			for j, s := range bondSum {
				if s > 0 {
					r.Bonds[i][j] /= s
				}
			}
		}
	}
}

// dividends is step 6's D_i = Σ_j B_ij·I_j, normalised to sum 1.
func (r *Result) dividends() {
	for i := range r.Validators {
		var d float64
		for j, b := range r.Bonds[i] {
			d += float64(b * r.Incentive[j])
		}
		r.Dividends[i] = d
	}
	r.Dividends = normalized(r.Dividends, r.Dividends)
}

// scan checks every rule firstError enforces, in map order, and returns
// the set of miners with a positive weight or bond (values are filled in
// later with their sorted positions).
func scan(in Input) (union map[string]int, ok bool) {
	if len(in.Stakes) == 0 {
		return nil, false
	}
	for id, s := range in.Stakes {
		if id == "" || !(s >= 0) || math.IsInf(s, 1) {
			return nil, false
		}
	}
	union = make(map[string]int)
	for _, c := range []struct {
		rows map[string]map[string]float64
		max  float64 // weights are unbounded, bonds at most 1
	}{{in.Weights, math.MaxFloat64}, {in.PrevBonds, 1}} {
		for id, row := range c.rows {
			if _, ok := in.Stakes[id]; !ok {
				return nil, false
			}
			for m, x := range row {
				if m == "" || !(x >= 0 && x <= c.max) {
					return nil, false
				}
				if x > 0 {
					if _, seen := union[m]; !seen {
						union[m] = 0
					}
				}
			}
		}
	}
	return union, true
}

// firstError returns the first violation in sorted order: stakes, then
// weights, then bonds, each by validator then miner. It is called only for
// inputs scan rejects, and always returns an error.
func firstError(in Input) error {
	if len(in.Stakes) == 0 {
		return fmt.Errorf("%w: empty stake set", ErrInvalid)
	}
	for _, id := range sortedKeys(in.Stakes) {
		if id == "" {
			return fmt.Errorf("%w: empty validator ID", ErrInvalid)
		}
		if s := in.Stakes[id]; !(s >= 0) || math.IsInf(s, 1) {
			return fmt.Errorf("%w: stake of validator %q is %v", ErrInvalid, id, s)
		}
	}
	for _, id := range sortedKeys(in.Weights) {
		if _, ok := in.Stakes[id]; !ok {
			return fmt.Errorf("%w: weights from validator %q, which has no stake entry", ErrInvalid, id)
		}
		row := in.Weights[id]
		for _, m := range sortedKeys(row) {
			if m == "" {
				return fmt.Errorf("%w: validator %q weights an empty miner ID", ErrInvalid, id)
			}
			if w := row[m]; !(w >= 0) || math.IsInf(w, 1) {
				return fmt.Errorf("%w: validator %q weights miner %q with %v", ErrInvalid, id, m, w)
			}
		}
	}
	for _, id := range sortedKeys(in.PrevBonds) {
		if _, ok := in.Stakes[id]; !ok {
			return fmt.Errorf("%w: previous bonds of validator %q, which has no stake entry", ErrInvalid, id)
		}
		row := in.PrevBonds[id]
		for _, m := range sortedKeys(row) {
			if m == "" {
				return fmt.Errorf("%w: validator %q has a previous bond to an empty miner ID", ErrInvalid, id)
			}
			if b := row[m]; !(b >= 0 && b <= 1) {
				return fmt.Errorf("%w: previous bond of validator %q to miner %q is %v, outside [0, 1]", ErrInvalid, id, m, b)
			}
		}
	}
	return fmt.Errorf("%w: input rejected", ErrInvalid)
}

func positive(x float64) bool { return x > 0 }

// digestRows encodes the rows of the validators that include selects: their
// count, then each as ID, positive-entry count and (miner ID, value) pairs.
func digestRows(e *encoder, vals, miners []string, rows [][]float64, include func(int) bool) {
	n := 0
	for i := range vals {
		if include(i) {
			n++
		}
	}
	e.u64(uint64(n))
	for i, id := range vals {
		if !include(i) {
			continue
		}
		e.str(id)
		n := 0
		for _, x := range rows[i] {
			if x > 0 {
				n++
			}
		}
		e.u64(uint64(n))
		for k, x := range rows[i] {
			if x > 0 {
				e.str(miners[k])
				e.f64(x)
			}
		}
	}
}

// weightedMedian returns the largest v among values such that the stakes of
// the entries with value ≥ v sum to at least threshold, or the smallest value
// if rounding keeps the full sum just below it (κ = 1). Entries are walked in
// descending value, ties in index order, so the running sum is the same bits
// on every node. stakes must be positive; idx is scratch of len(values).
func weightedMedian(values, stakes []float64, threshold float64, idx []int) float64 {
	if len(values) == 0 {
		return 0
	}
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case values[a] > values[b]:
			return -1
		case values[a] < values[b]:
			return 1
		}
		return a - b
	})
	var cum float64
	for _, k := range idx {
		cum += stakes[k]
		if cum >= threshold {
			return values[k]
		}
	}
	return values[idx[len(idx)-1]]
}

// normalized writes x / Σx (summed in index order) into dst, or zeros if the
// sum is zero.
func normalized(x, dst []float64) []float64 {
	var sum float64
	for _, v := range x {
		sum += v
	}
	for k, v := range x {
		if sum > 0 {
			dst[k] = v / sum
		} else {
			dst[k] = 0
		}
	}
	return dst
}

// matrix returns rows×cols zeros backed by one allocation.
func matrix(rows, cols int) [][]float64 {
	backing := make([]float64, rows*cols)
	m := make([][]float64, rows)
	for i := range m {
		m[i] = backing[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BondsMap returns the positive bonds as validator → miner → bond, the form
// Input.PrevBonds takes. Zero bonds are left out; they mean the same thing.
func (r *Result) BondsMap() map[string]map[string]float64 {
	out := make(map[string]map[string]float64)
	for i, id := range r.Validators {
		for j, b := range r.Bonds[i] {
			if b > 0 {
				if out[id] == nil {
					out[id] = make(map[string]float64)
				}
				out[id][r.Miners[j]] = b
			}
		}
	}
	return out
}

// Domain strings separate these encodings from every other SHA-256 use;
// bump the version whenever an encoding or the arithmetic changes.
const (
	inputDomain  = "pog/consensus/input/v1"
	resultDomain = "pog/consensus/result/v2"
)

// Hash is SHA-256 over a canonical big-endian encoding of every field of r:
// the domain string, the params, InputHash, then each list length-prefixed
// (u64) in field order, strings as u64 length plus bytes, floats as
// math.Float64bits, bools as one byte, matrices row by row. Two nodes agree
// on an epoch, inputs and outputs, iff their hashes are equal.
func (r *Result) Hash() [32]byte {
	e := newEncoder(resultDomain)
	e.floats([]float64{r.Params.Kappa, r.Params.BondAlpha, r.Params.MinStake})
	e.write([]byte{boolByte(r.Params.NormalizeBonds)})
	e.write(r.InputHash[:])
	e.strs(r.Validators)
	e.strs(r.Miners)
	e.floats(r.Consensus)
	e.floats(r.Rank)
	e.floats(r.Incentive)
	e.u64(uint64(len(r.Active)))
	for _, a := range r.Active {
		e.write([]byte{boolByte(a)})
	}
	e.floats(r.Stake)
	e.floats(r.Trust)
	e.floats(r.Dividends)
	e.floats([]float64{r.Agreement})
	for _, m := range [][][]float64{r.Clipped, r.Bonds} {
		e.u64(uint64(len(m)))
		for _, row := range m {
			e.floats(row)
		}
	}
	return e.sum()
}

// encoder feeds a canonical encoding to SHA-256 through a buffer, so that
// large matrices neither go through the hash one word at a time nor sit in
// memory whole.
type encoder struct {
	h hash.Hash
	b []byte
}

func newEncoder(domain string) *encoder {
	e := &encoder{h: sha256.New(), b: make([]byte, 0, 8192)}
	e.str(domain)
	return e
}

func (e *encoder) flush() {
	if len(e.b) >= 8192-64 {
		e.h.Write(e.b)
		e.b = e.b[:0]
	}
}

func (e *encoder) write(p []byte) {
	e.b = append(e.b, p...)
	e.flush()
}

func (e *encoder) u64(x uint64) {
	e.b = binary.BigEndian.AppendUint64(e.b, x)
	e.flush()
}

func (e *encoder) f64(x float64) { e.u64(math.Float64bits(x)) }

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.b = append(e.b, s...)
	e.flush()
}

func (e *encoder) strs(ss []string) {
	e.u64(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) floats(fs []float64) {
	e.u64(uint64(len(fs)))
	for _, f := range fs {
		e.f64(f)
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (e *encoder) sum() (out [32]byte) {
	e.h.Write(e.b)
	e.b = e.b[:0]
	copy(out[:], e.h.Sum(nil))
	return out
}
