package consensus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func mustCompute(t *testing.T, p Params, in Input) *Result {
	t.Helper()
	r, err := Compute(p, in)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return r
}

func index(t *testing.T, ids []string, id string) int {
	t.Helper()
	for k, s := range ids {
		if s == id {
			return k
		}
	}
	t.Fatalf("%q not in %q", id, ids)
	return -1
}

// checkBy compares a per-miner or per-validator slice with want, and checks
// that want names every ID (so a missing or extra entry fails too).
func checkBy(t *testing.T, what string, ids []string, got []float64, want map[string]float64) {
	t.Helper()
	if len(ids) != len(want) {
		t.Errorf("%s: ids %q, want keys of %v", what, ids, want)
	}
	for id, w := range want {
		if g := got[index(t, ids, id)]; !near(g, w) {
			t.Errorf("%s[%s] = %.17g, want %.17g", what, id, g, w)
		}
	}
}

// checkMatrix compares [validator][miner] against want; absent entries must
// be zero.
func checkMatrix(t *testing.T, what string, r *Result, got [][]float64, want map[string]map[string]float64) {
	t.Helper()
	for i, v := range r.Validators {
		for j, m := range r.Miners {
			if w := want[v][m]; !near(got[i][j], w) {
				t.Errorf("%s[%s][%s] = %.17g, want %.17g", what, v, m, got[i][j], w)
			}
		}
	}
}

func TestUnanimous(t *testing.T) {
	// Every validator publishes the same vector, so every column is constant:
	// C = W, nothing is clipped, T = 1 exactly (same sums in the same order),
	// R_j = Σ_i S_i·W_j = W_j, I = W. First-epoch bonds: ΔB_ij = S_i·W_j /
	// (W_j·Σ S) = S_i, B = 0.1·S_i, D_i ∝ Σ_j 0.1·S_i·I_j = 0.1·S_i, so D = S.
	for _, tc := range []struct {
		name   string
		stakes map[string]float64
		w      map[string]float64 // raw, published by everyone
		want   map[string]float64 // normalised
	}{
		{"one validator", map[string]float64{"v": 7}, map[string]float64{"a": 2, "b": 6}, map[string]float64{"a": 0.25, "b": 0.75}},
		{"three validators 10/20/30", map[string]float64{"v1": 10, "v2": 20, "v3": 30},
			map[string]float64{"a": 1, "b": 3}, map[string]float64{"a": 0.25, "b": 0.75}},
		{"four miners, non-dyadic", map[string]float64{"p": 1, "q": 1, "r": 1, "s": 4},
			map[string]float64{"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}, map[string]float64{"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Stakes: tc.stakes, Weights: map[string]map[string]float64{}}
			var total float64
			for v, s := range tc.stakes {
				in.Weights[v] = tc.w
				total += s
			}
			r := mustCompute(t, DefaultParams(), in)
			checkBy(t, "consensus", r.Miners, r.Consensus, tc.want)
			checkBy(t, "incentive", r.Miners, r.Incentive, tc.want)
			stake, trust := map[string]float64{}, map[string]float64{}
			for v, s := range tc.stakes {
				stake[v] = s / total
				trust[v] = 1
			}
			checkBy(t, "trust", r.Validators, r.Trust, trust)
			checkBy(t, "dividends", r.Validators, r.Dividends, stake)
			for i, v := range r.Validators {
				if r.Trust[i] != 1 {
					t.Errorf("trust[%s] = %.17g, want exactly 1", v, r.Trust[i])
				}
				for j := range r.Miners {
					if r.Clipped[i][j] != r.Consensus[j] {
						t.Errorf("clipped[%s][%s] = %v, want consensus %v", v, r.Miners[j], r.Clipped[i][j], r.Consensus[j])
					}
				}
			}
			if !near(r.Agreement, 1) {
				t.Errorf("agreement = %v, want 1", r.Agreement)
			}
		})
	}
}

func TestThreeValidators(t *testing.T) {
	// Stakes 5/3/2 → S = 0.5/0.3/0.2. With κ = 0.5 the coalitions reaching
	// half the stake are {v1} and {v2, v3}, so C_j = max(W_1j, min(W_2j, W_3j)).
	//        a    b    c      (raw weights sum to 10 per row)
	//  v1  0.6  0.4  0
	//  v2  0.2  0.5  0.3
	//  v3  0.1  0.1  0.8
	// C_a = max(.6, min(.2,.1)) = .6; C_b = max(.4, min(.5,.1)) = .4;
	// C_c = max(0, min(.3,.8)) = .3.
	// Clipped: v1 = .6 .4 0 (T=1); v2 = .2 .4 .3 (T=.9); v3 = .1 .1 .3 (T=.5).
	// R_a = .5·.6 + .3·.2 + .2·.1 = .38; R_b = .5·.4 + .3·.4 + .2·.1 = .34;
	// R_c = .3·.3 + .2·.3 = .15; Σ R = .87 = agreement .5·1 + .3·.9 + .2·.5.
	// Epoch-one bonds: B_ij = .1·S_i·W̄_ij / R_j, so D_i ∝ Σ_j S_i·W̄_ij/R_j·R_j
	// = S_i·T_i: D ∝ .5, .27, .1 → /.87.
	in := Input{
		Stakes: map[string]float64{"v1": 5, "v2": 3, "v3": 2},
		Weights: map[string]map[string]float64{
			"v1": {"a": 6, "b": 4},
			"v2": {"a": 2, "b": 5, "c": 3},
			"v3": {"a": 1, "b": 1, "c": 8},
		},
	}
	r := mustCompute(t, DefaultParams(), in)
	checkBy(t, "consensus", r.Miners, r.Consensus, map[string]float64{"a": .6, "b": .4, "c": .3})
	checkMatrix(t, "clipped", r, r.Clipped, map[string]map[string]float64{
		"v1": {"a": .6, "b": .4},
		"v2": {"a": .2, "b": .4, "c": .3},
		"v3": {"a": .1, "b": .1, "c": .3},
	})
	checkBy(t, "rank", r.Miners, r.Rank, map[string]float64{"a": .38, "b": .34, "c": .15})
	checkBy(t, "incentive", r.Miners, r.Incentive, map[string]float64{"a": .38 / .87, "b": .34 / .87, "c": .15 / .87})
	checkBy(t, "stake", r.Validators, r.Stake, map[string]float64{"v1": .5, "v2": .3, "v3": .2})
	checkBy(t, "trust", r.Validators, r.Trust, map[string]float64{"v1": 1, "v2": .9, "v3": .5})
	checkBy(t, "dividends", r.Validators, r.Dividends, map[string]float64{"v1": .5 / .87, "v2": .27 / .87, "v3": .1 / .87})
	if !near(r.Agreement, .87) {
		t.Errorf("agreement = %v, want .87", r.Agreement)
	}
	checkMatrix(t, "bonds", r, r.Bonds, map[string]map[string]float64{
		"v1": {"a": .1 * .30 / .38, "b": .1 * .20 / .34},
		"v2": {"a": .1 * .06 / .38, "b": .1 * .12 / .34, "c": .1 * .09 / .15},
		"v3": {"a": .1 * .02 / .38, "b": .1 * .02 / .34, "c": .1 * .06 / .15},
	})
}

func TestWeightedMedian(t *testing.T) {
	// threshold is κ·Σ stakes; the answer is the largest value whose
	// at-or-above stake reaches it.
	for _, tc := range []struct {
		name      string
		values    []float64
		stakes    []float64
		threshold float64
		want      float64
	}{
		{"empty", nil, nil, 0.5, 0},
		{"single", []float64{.3}, []float64{1}, 0.5, .3},
		// desc .7(4) .5(3) .3(2) .1(1): cum 4 < 5, 7 ≥ 5 → .5
		{"middle", []float64{.7, .5, .3, .1}, []float64{4, 3, 2, 1}, 5, .5},
		// same, unordered input
		{"unordered", []float64{.3, .1, .7, .5}, []float64{2, 1, 4, 3}, 5, .5},
		// exactly half above: .9 has 5 of 10 ≥ 5 → .9 (ties at κ go up)
		{"tie at kappa", []float64{.9, .2}, []float64{5, 5}, 5, .9},
		// κ = 1: every stake must be at or above → the minimum
		{"kappa one", []float64{.9, .2, .4}, []float64{1, 1, 1}, 3, .2},
		// κ small: the maximum with ≥ threshold stake: .9 has 1 ≥ 1 → .9
		{"kappa small", []float64{.9, .2, .4}, []float64{1, 1, 1}, 1, .9},
		// equal values, stake split across the tie: .4 group has 6 ≥ 5
		{"equal values", []float64{.4, .4, .4, .8}, []float64{2, 2, 2, 4}, 5, .4},
		// zero weights count: two of three stake give 0 → 0
		{"zeros", []float64{0, 0, 1}, []float64{3, 3, 4}, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := weightedMedian(tc.values, tc.stakes, tc.threshold, make([]int, len(tc.values)))
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDishonestValidator(t *testing.T) {
	// Honest validators h1, h2 weight a:b:c = 1:1:2 (→ .25 .25 .5). The
	// dishonest validator d puts everything on one miner. Stakes total 10.
	honest := map[string]float64{"a": 1, "b": 1, "c": 2}
	for _, tc := range []struct {
		name      string
		stakes    map[string]float64
		d         map[string]float64
		consensus map[string]float64
		incentive map[string]float64
		trust     map[string]float64
		agreement float64
	}{{
		// d (10%) self-deals to x: only 1 of 10 stake has W_x ≥ anything > 0,
		// so C_x = 0 and d is clipped to nothing (T = 0). Honest columns have
		// 9 ≥ 5 at their values. R = .9·(.25,.25,.5), 0 → I unchanged.
		name:      "minority 10% self-dealing",
		stakes:    map[string]float64{"h1": 5, "h2": 4, "d": 1},
		d:         map[string]float64{"x": 1},
		consensus: map[string]float64{"a": .25, "b": .25, "c": .5, "x": 0},
		incentive: map[string]float64{"a": .25, "b": .25, "c": .5, "x": 0},
		trust:     map[string]float64{"h1": 1, "h2": 1, "d": 0},
		agreement: .9,
	}, {
		// 40% is still below κ: same outcome, agreement .6.
		name:      "minority 40% self-dealing",
		stakes:    map[string]float64{"h1": 3, "h2": 3, "d": 4},
		d:         map[string]float64{"x": 1},
		consensus: map[string]float64{"a": .25, "b": .25, "c": .5, "x": 0},
		incentive: map[string]float64{"a": .25, "b": .25, "c": .5, "x": 0},
		trust:     map[string]float64{"h1": 1, "h2": 1, "d": 0},
		agreement: .6,
	}, {
		// d (10%) piles onto honest miner c: C_c stays .5 (d's 1.0 has 1 < 5),
		// d keeps .5 of its weight (T = .5). R_a = R_b = .9·.25 = .225,
		// R_c = .9·.5 + .1·.5 = .5; Σ = .95. Unclipped, I_c would be .55;
		// clipped it is .5/.95 ≈ .526, and a, b lose ~1.3 points each.
		name:      "minority 10% boosting c",
		stakes:    map[string]float64{"h1": 5, "h2": 4, "d": 1},
		d:         map[string]float64{"c": 1},
		consensus: map[string]float64{"a": .25, "b": .25, "c": .5},
		incentive: map[string]float64{"a": .225 / .95, "b": .225 / .95, "c": .5 / .95},
		trust:     map[string]float64{"h1": 1, "h2": 1, "d": .5},
		agreement: .95,
	}, {
		// Exactly κ: each side holds 5 ≥ 5, so both keep their weights (the
		// tie goes to the higher value). R_x = .5, R_a = R_b = .125, R_c = .25.
		name:      "exactly half",
		stakes:    map[string]float64{"h1": 3, "h2": 2, "d": 5},
		d:         map[string]float64{"x": 1},
		consensus: map[string]float64{"a": .25, "b": .25, "c": .5, "x": 1},
		incentive: map[string]float64{"a": .125, "b": .125, "c": .25, "x": .5},
		trust:     map[string]float64{"h1": 1, "h2": 1, "d": 1},
		agreement: 1,
	}, {
		// Majority 60% > κ: C_x = 1 (6 ≥ 5), and honest columns have only
		// 4 < 5 stake above 0, so C_a = C_b = C_c = 0. The honest validators
		// lose all trust and x takes all incentive: κ = 0.5 tolerates only
		// less than half of the active stake being dishonest.
		name:      "majority 60% self-dealing",
		stakes:    map[string]float64{"h1": 2, "h2": 2, "d": 6},
		d:         map[string]float64{"x": 1},
		consensus: map[string]float64{"a": 0, "b": 0, "c": 0, "x": 1},
		incentive: map[string]float64{"a": 0, "b": 0, "c": 0, "x": 1},
		trust:     map[string]float64{"h1": 0, "h2": 0, "d": 1},
		agreement: .6,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompute(t, DefaultParams(), Input{
				Stakes:  tc.stakes,
				Weights: map[string]map[string]float64{"h1": honest, "h2": honest, "d": tc.d},
			})
			checkBy(t, "consensus", r.Miners, r.Consensus, tc.consensus)
			checkBy(t, "incentive", r.Miners, r.Incentive, tc.incentive)
			checkBy(t, "trust", r.Validators, r.Trust, tc.trust)
			if !near(r.Agreement, tc.agreement) {
				t.Errorf("agreement = %v, want %v", r.Agreement, tc.agreement)
			}
			// Dividends follow stake × trust in a first epoch; a clipped-away
			// validator earns nothing.
			if i := index(t, r.Validators, "d"); tc.trust["d"] == 0 && r.Dividends[i] != 0 {
				t.Errorf("dishonest dividends = %v, want 0", r.Dividends[i])
			}
		})
	}
}

func TestBondsThreeEpochs(t *testing.T) {
	// Stakes A 3, B 1 → S = .75/.25; α = .1. Bonds carried with BondsMap.
	p := DefaultParams()
	in := Input{Stakes: map[string]float64{"A": 3, "B": 1}}

	// Epoch 1: A weights m, B weights n. C_m = 1 (3 ≥ 2), C_n = 0 (1 < 2),
	// so B is clipped to nothing. ΔB_m = (.75, 0)/.75 = (1, 0); column n has
	// no clipped weight. B = .1·ΔB: A–m .1. I = (1, 0) → D = (1, 0).
	in.Weights = map[string]map[string]float64{"A": {"m": 1}, "B": {"n": 1}}
	r := mustCompute(t, p, in)
	checkBy(t, "e1 trust", r.Validators, r.Trust, map[string]float64{"A": 1, "B": 0})
	checkBy(t, "e1 incentive", r.Miners, r.Incentive, map[string]float64{"m": 1, "n": 0})
	checkMatrix(t, "e1 bonds", r, r.Bonds, map[string]map[string]float64{"A": {"m": .1}})
	checkBy(t, "e1 dividends", r.Validators, r.Dividends, map[string]float64{"A": 1, "B": 0})

	// Epoch 2: both weight m. ΔB_m = (.75, .25).
	// B_Am = .1·.75 + .9·.1 = .165; B_Bm = .1·.25 + .9·0 = .025.
	// I_m = 1 → D = (.165, .025)/.19: B earns 13% on 25% stake because A
	// bonded to m first.
	in.PrevBonds = r.BondsMap()
	in.Weights = map[string]map[string]float64{"A": {"m": 1}, "B": {"m": 1}}
	r = mustCompute(t, p, in)
	checkMatrix(t, "e2 bonds", r, r.Bonds, map[string]map[string]float64{"A": {"m": .165}, "B": {"m": .025}})
	checkBy(t, "e2 dividends", r.Validators, r.Dividends, map[string]float64{"A": .165 / .19, "B": .025 / .19})

	// Epoch 3: both weight m and n equally. C = (.5, .5), ΔB = (.75, .25) in
	// both columns.
	// B_Am = .075 + .9·.165 = .2235; B_Bm = .025 + .9·.025 = .0475;
	// B_An = .075;                   B_Bn = .025.
	// I = (.5, .5): D'_A = .5·(.2235 + .075) = .14925,
	// D'_B = .5·(.0475 + .025) = .03625; Σ = .1855.
	in.PrevBonds = r.BondsMap()
	in.Weights = map[string]map[string]float64{"A": {"m": 1, "n": 1}, "B": {"m": 1, "n": 1}}
	r = mustCompute(t, p, in)
	checkMatrix(t, "e3 bonds", r, r.Bonds, map[string]map[string]float64{
		"A": {"m": .2235, "n": .075},
		"B": {"m": .0475, "n": .025},
	})
	checkBy(t, "e3 dividends", r.Validators, r.Dividends, map[string]float64{"A": .14925 / .1855, "B": .03625 / .1855})

	// Epoch 4: nobody publishes. No consensus, no incentive, so no
	// dividends; every bond decays by .9.
	in.PrevBonds = r.BondsMap()
	in.Weights = nil
	r = mustCompute(t, p, in)
	checkMatrix(t, "e4 bonds", r, r.Bonds, map[string]map[string]float64{
		"A": {"m": .9 * .2235, "n": .9 * .075},
		"B": {"m": .9 * .0475, "n": .9 * .025},
	})
	checkBy(t, "e4 dividends", r.Validators, r.Dividends, map[string]float64{"A": 0, "B": 0})
	checkBy(t, "e4 incentive", r.Miners, r.Incentive, map[string]float64{"m": 0, "n": 0})
	for i, a := range r.Active {
		if a {
			t.Errorf("validator %s active with no submission", r.Validators[i])
		}
	}
}

func TestBondsNormalized(t *testing.T) {
	// The same three epochs as TestBondsThreeEpochs with subtensor's column
	// normalisation after the EMA.
	p := DefaultParams()
	p.NormalizeBonds = true
	in := Input{Stakes: map[string]float64{"A": 3, "B": 1}}

	// Epoch 1: B_Am = .1 → column sum .1 → 1. D = (1, 0).
	in.Weights = map[string]map[string]float64{"A": {"m": 1}, "B": {"n": 1}}
	r := mustCompute(t, p, in)
	checkMatrix(t, "e1 bonds", r, r.Bonds, map[string]map[string]float64{"A": {"m": 1}})

	// Epoch 2: B_Am = .075 + .9·1 = .975, B_Bm = .025; the column already
	// sums to 1. D = (.975, .025): A's head start on m is worth more than
	// unnormalised (.165/.19 ≈ .868), since epoch 1's bond counted in full.
	in.PrevBonds = r.BondsMap()
	in.Weights = map[string]map[string]float64{"A": {"m": 1}, "B": {"m": 1}}
	r = mustCompute(t, p, in)
	checkMatrix(t, "e2 bonds", r, r.Bonds, map[string]map[string]float64{"A": {"m": .975}, "B": {"m": .025}})
	checkBy(t, "e2 dividends", r.Validators, r.Dividends, map[string]float64{"A": .975, "B": .025})

	// Epoch 3: m: .075 + .9·.975 = .9525, .025 + .9·.025 = .0475 (sum 1).
	// n is new: (.075, .025) → normalised (.75, .25), so it counts in full.
	// D'_A = .5·(.9525 + .75) = .85125, D'_B = .5·(.0475 + .25) = .14875.
	in.PrevBonds = r.BondsMap()
	in.Weights = map[string]map[string]float64{"A": {"m": 1, "n": 1}, "B": {"m": 1, "n": 1}}
	r = mustCompute(t, p, in)
	checkMatrix(t, "e3 bonds", r, r.Bonds, map[string]map[string]float64{
		"A": {"m": .9525, "n": .75},
		"B": {"m": .0475, "n": .25},
	})
	checkBy(t, "e3 dividends", r.Validators, r.Dividends, map[string]float64{"A": .85125, "B": .14875})
}

func TestBondsEdgeParams(t *testing.T) {
	// α = 1 forgets the past: B = ΔB. κ = 1 needs all stake: C_j = min_i W_ij.
	p := Params{Kappa: 1, BondAlpha: 1}
	r := mustCompute(t, p, Input{
		Stakes: map[string]float64{"A": 1, "B": 1},
		// W_A = (.75, .25), W_B = (.25, .75) → C = (.25, .25).
		Weights:   map[string]map[string]float64{"A": {"m": 3, "n": 1}, "B": {"m": 1, "n": 3}},
		PrevBonds: map[string]map[string]float64{"A": {"m": 1, "old": 1}},
	})
	checkBy(t, "consensus", r.Miners, r.Consensus, map[string]float64{"m": .25, "n": .25, "old": 0})
	// Clipped both (.25, .25): ΔB = .5 everywhere; the old bond is gone.
	checkMatrix(t, "bonds", r, r.Bonds, map[string]map[string]float64{
		"A": {"m": .5, "n": .5}, "B": {"m": .5, "n": .5},
	})
	checkBy(t, "trust", r.Validators, r.Trust, map[string]float64{"A": .5, "B": .5})
}

func TestMissingValidators(t *testing.T) {
	// C (stake 2) publishes nothing: S is over A and B only, 5/8 and 3/8,
	// but the threshold is κ·10 = 5, C voting zero. n appears only in B's
	// weights (A's is 0). C_m: A's 1 has 5 ≥ 5 → 1. C_n: B's .5 has 3 < 5 → 0.
	// Clipped B = (.5, 0), T_B = .5. R_m = 5/8 + 3/8·.5 = .8125, I = (1, 0).
	// D ∝ S_i·T_i = .625, .1875 → /.8125; C is inactive and has no bonds.
	stakes := map[string]float64{"A": 5, "B": 3, "C": 2}
	weights := map[string]map[string]float64{"A": {"m": 1}, "B": {"m": 1, "n": 1}}
	r := mustCompute(t, DefaultParams(), Input{Stakes: stakes, Weights: weights})
	checkBy(t, "stake", r.Validators, r.Stake, map[string]float64{"A": .625, "B": .375, "C": 0})
	checkBy(t, "consensus", r.Miners, r.Consensus, map[string]float64{"m": 1, "n": 0})
	checkBy(t, "incentive", r.Miners, r.Incentive, map[string]float64{"m": 1, "n": 0})
	checkBy(t, "trust", r.Validators, r.Trust, map[string]float64{"A": 1, "B": .5, "C": 0})
	checkBy(t, "dividends", r.Validators, r.Dividends, map[string]float64{"A": .625 / .8125, "B": .1875 / .8125, "C": 0})
	if want := []bool{true, true, false}; fmt.Sprint(r.Active) != fmt.Sprint(want) {
		t.Errorf("active = %v, want %v", r.Active, want)
	}

	// If C publishes an empty vector instead, it is active: its stake counts
	// (S = .5/.3/.2, threshold 5) and its zeros vote. C_m: A's 5 ≥ 5 → 1
	// still; C_n: 0. T_C = 0 (nothing to clip).
	weights["C"] = map[string]float64{}
	r = mustCompute(t, DefaultParams(), Input{Stakes: stakes, Weights: weights})
	checkBy(t, "stake with C", r.Validators, r.Stake, map[string]float64{"A": .5, "B": .3, "C": .2})
	checkBy(t, "trust with C", r.Validators, r.Trust, map[string]float64{"A": 1, "B": .5, "C": 0})
	checkBy(t, "incentive with C", r.Miners, r.Incentive, map[string]float64{"m": 1, "n": 0})
	// R_m = .5·1 + .3·.5 = .65
	checkBy(t, "rank with C", r.Miners, r.Rank, map[string]float64{"m": .65, "n": 0})
}

// The threshold is a share of the whole stake set: validators a node has
// no record from vote zero, so those it heard from need κ of all stake.
func TestThresholdOverStakeSet(t *testing.T) {
	// A (2) weights m, B (1) weights n, C (3) is absent. Over the
	// publishers alone A would hold 2/3 and set C_m = 1; over the stake set
	// (threshold 3) neither miner has enough support.
	stakes := map[string]float64{"A": 2, "B": 1, "C": 3}
	weights := map[string]map[string]float64{"A": {"m": 1}, "B": {"n": 1}}
	r := mustCompute(t, DefaultParams(), Input{Stakes: stakes, Weights: weights})
	checkBy(t, "consensus", r.Miners, r.Consensus, map[string]float64{"m": 0, "n": 0})
	checkBy(t, "trust", r.Validators, r.Trust, map[string]float64{"A": 0, "B": 0, "C": 0})
	// With C's stake removed (as for a proven equivocator), A's 2 of 3 is
	// enough for m and B's 1 is not enough for n.
	stakes["C"] = 0
	r = mustCompute(t, DefaultParams(), Input{Stakes: stakes, Weights: weights})
	checkBy(t, "consensus without C", r.Miners, r.Consensus, map[string]float64{"m": 1, "n": 0})
	// A stake floor removes a validator from the set as well.
	stakes["C"] = 3
	p := DefaultParams()
	p.MinStake = 4
	stakes["A"], stakes["B"] = 5, 5
	r = mustCompute(t, p, Input{Stakes: stakes, Weights: weights})
	checkBy(t, "consensus with floor", r.Miners, r.Consensus, map[string]float64{"m": 1, "n": 1})
}

func TestStakeFloor(t *testing.T) {
	// MinStake 3: C (2) is ignored as if absent; B (exactly 3) counts.
	// A weights m, B weights n, C weights n. Without the floor, C_n has
	// B + C = 5 ≥ 5 → C_n = 1; with it, C_n needs 4 of 8 and B has 3 → 0.
	in := Input{
		Stakes:  map[string]float64{"A": 5, "B": 3, "C": 2},
		Weights: map[string]map[string]float64{"A": {"m": 1}, "B": {"n": 1}, "C": {"n": 1}},
	}
	r := mustCompute(t, DefaultParams(), in)
	checkBy(t, "consensus no floor", r.Miners, r.Consensus, map[string]float64{"m": 1, "n": 1})
	p := DefaultParams()
	p.MinStake = 3
	r = mustCompute(t, p, in)
	checkBy(t, "consensus floor", r.Miners, r.Consensus, map[string]float64{"m": 1, "n": 0})
	checkBy(t, "stake floor", r.Validators, r.Stake, map[string]float64{"A": .625, "B": .375, "C": 0})
	if want := []bool{true, true, false}; fmt.Sprint(r.Active) != fmt.Sprint(want) {
		t.Errorf("active = %v, want %v", r.Active, want)
	}
}

func TestZeroStakeOnly(t *testing.T) {
	// Validators with zero stake may publish but carry no consensus; if no
	// stake is behind any submission there is no consensus at all.
	r := mustCompute(t, DefaultParams(), Input{
		Stakes:  map[string]float64{"A": 0, "B": 1},
		Weights: map[string]map[string]float64{"A": {"m": 1}},
	})
	checkBy(t, "incentive", r.Miners, r.Incentive, map[string]float64{"m": 0})
	checkBy(t, "trust", r.Validators, r.Trust, map[string]float64{"A": 0, "B": 0})
	if r.Active[0] || r.Active[1] {
		t.Errorf("active = %v with no stake behind submissions", r.Active)
	}
}

func TestErrors(t *testing.T) {
	ok := func() Input {
		return Input{
			Stakes:    map[string]float64{"A": 1, "B": 2},
			Weights:   map[string]map[string]float64{"A": {"m": 1}},
			PrevBonds: map[string]map[string]float64{"B": {"m": .5}},
		}
	}
	nan, inf, max := math.NaN(), math.Inf(1), math.MaxFloat64
	for _, tc := range []struct {
		name string
		p    func(*Params)
		in   func(*Input)
		msg  string
	}{
		{"kappa zero", func(p *Params) { p.Kappa = 0 }, nil, "kappa"},
		{"kappa above one", func(p *Params) { p.Kappa = 1.5 }, nil, "kappa"},
		{"kappa NaN", func(p *Params) { p.Kappa = nan }, nil, "kappa"},
		{"alpha zero", func(p *Params) { p.BondAlpha = 0 }, nil, "bond alpha"},
		{"alpha above one", func(p *Params) { p.BondAlpha = 1.1 }, nil, "bond alpha"},
		{"alpha negative", func(p *Params) { p.BondAlpha = -.1 }, nil, "bond alpha"},
		{"alpha NaN", func(p *Params) { p.BondAlpha = nan }, nil, "bond alpha"},
		{"min stake negative", func(p *Params) { p.MinStake = -1 }, nil, "min stake"},
		{"min stake NaN", func(p *Params) { p.MinStake = nan }, nil, "min stake"},
		{"min stake inf", func(p *Params) { p.MinStake = inf }, nil, "min stake"},
		{"no stakes", nil, func(in *Input) { in.Stakes = nil }, "empty stake set"},
		{"negative stake", nil, func(in *Input) { in.Stakes["A"] = -1 }, `stake of validator "A"`},
		{"NaN stake", nil, func(in *Input) { in.Stakes["B"] = nan }, `stake of validator "B"`},
		{"infinite stake", nil, func(in *Input) { in.Stakes["B"] = inf }, `stake of validator "B"`},
		{"stake overflow", nil, func(in *Input) {
			in.Stakes["A"], in.Stakes["B"] = max, max
			in.Weights["B"] = map[string]float64{"m": 1}
		}, "total active stake overflows"},
		{"empty validator ID", nil, func(in *Input) { in.Stakes[""] = 1 }, "empty validator ID"},
		{"unknown validator", nil, func(in *Input) { in.Weights["Z"] = map[string]float64{"m": 1} }, `validator "Z", which has no stake`},
		{"negative weight", nil, func(in *Input) { in.Weights["A"]["n"] = -0.1 }, `miner "n" with -0.1`},
		{"NaN weight", nil, func(in *Input) { in.Weights["A"]["n"] = nan }, `miner "n" with NaN`},
		{"infinite weight", nil, func(in *Input) { in.Weights["A"]["n"] = inf }, `miner "n" with +Inf`},
		{"weights overflow", nil, func(in *Input) { in.Weights["A"] = map[string]float64{"m": max, "n": max} }, `weights of validator "A" overflow`},
		{"empty miner ID", nil, func(in *Input) { in.Weights["A"][""] = 1 }, "empty miner ID"},
		{"bad weight below floor still rejected", func(p *Params) { p.MinStake = 5 }, func(in *Input) { in.Weights["A"]["n"] = -1 }, `miner "n"`},
		{"bonds of unknown validator", nil, func(in *Input) { in.PrevBonds["Z"] = map[string]float64{"m": .1} }, `bonds of validator "Z"`},
		{"bond above one", nil, func(in *Input) { in.PrevBonds["B"]["m"] = 1.0000001 }, "outside [0, 1]"},
		{"negative bond", nil, func(in *Input) { in.PrevBonds["B"]["m"] = -.1 }, "outside [0, 1]"},
		{"NaN bond", nil, func(in *Input) { in.PrevBonds["B"]["m"] = nan }, "outside [0, 1]"},
		{"bond to empty miner", nil, func(in *Input) { in.PrevBonds["B"][""] = .1 }, "empty miner ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, in := DefaultParams(), ok()
			if tc.p != nil {
				tc.p(&p)
			}
			if tc.in != nil {
				tc.in(&in)
			}
			r, err := Compute(p, in)
			if err == nil {
				t.Fatalf("no error; result %+v", r)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: want ErrInvalid mentioning %q", err, tc.msg)
			}
		})
	}
	// With many faults, every run reports the same (sorted-first) one.
	bad := ok()
	for k := range 20 {
		bad.Weights["A"][fmt.Sprintf("m%02d", k)] = -1
	}
	_, first := Compute(DefaultParams(), bad)
	for range 20 {
		if _, err := Compute(DefaultParams(), bad); err.Error() != first.Error() {
			t.Fatalf("error %q, earlier %q", err, first)
		}
	}
	if !strings.Contains(first.Error(), `"m00"`) {
		t.Errorf("error %q, want the first miner m00", first)
	}

	// The base input is valid, as are the boundary params.
	for _, p := range []Params{DefaultParams(), {Kappa: 1, BondAlpha: 1}, {Kappa: 1e-9, BondAlpha: 1e-9, MinStake: 2}} {
		if _, err := Compute(p, ok()); err != nil {
			t.Errorf("params %+v: %v", p, err)
		}
	}
}

// entry is one (validator, miner, value) record, so that tests can build the
// same maps in different orders.
type entry struct {
	v, m string
	x    float64
}

type flatInput struct {
	stakes         []entry // m unused
	weights, bonds []entry
}

// randomInput draws a messy epoch: non-dyadic stakes and weights (so that
// summation order would show), some zeros, some absent validators, some
// miners only in bonds.
func randomInput(rng *rand.Rand, nv, nm int) flatInput {
	var f flatInput
	for i := range nv {
		v := fmt.Sprintf("val-%03d", i)
		f.stakes = append(f.stakes, entry{v: v, x: rng.Float64() * 1000})
		if rng.IntN(8) == 0 {
			continue // did not publish
		}
		for j := range nm {
			m := fmt.Sprintf("miner-%04d", j)
			switch rng.IntN(5) {
			case 0: // absent
			case 1:
				f.weights = append(f.weights, entry{v, m, 0})
			default:
				f.weights = append(f.weights, entry{v, m, rng.Float64()})
			}
			if rng.IntN(3) == 0 {
				f.bonds = append(f.bonds, entry{v, m, rng.Float64() / float64(nv)})
			}
		}
	}
	for j := nm; j < nm+3; j++ { // miners only in bonds
		f.bonds = append(f.bonds, entry{f.stakes[0].v, fmt.Sprintf("miner-%04d", j), .01})
	}
	return f
}

// build constructs the maps, inserting entries in the order perm gives (nil:
// as listed).
func (f flatInput) build(rng *rand.Rand) Input {
	in := Input{Stakes: map[string]float64{}, Weights: map[string]map[string]float64{}, PrevBonds: map[string]map[string]float64{}}
	order := func(n int) []int {
		if rng == nil {
			p := make([]int, n)
			for k := range p {
				p[k] = k
			}
			return p
		}
		return rng.Perm(n)
	}
	for _, k := range order(len(f.stakes)) {
		in.Stakes[f.stakes[k].v] = f.stakes[k].x
	}
	for _, k := range order(len(f.weights)) {
		e := f.weights[k]
		if in.Weights[e.v] == nil {
			in.Weights[e.v] = map[string]float64{}
		}
		in.Weights[e.v][e.m] = e.x
	}
	for _, k := range order(len(f.bonds)) {
		e := f.bonds[k]
		if in.PrevBonds[e.v] == nil {
			in.PrevBonds[e.v] = map[string]float64{}
		}
		in.PrevBonds[e.v][e.m] = e.x
	}
	return in
}

func TestDeterminismShuffled(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := randomInput(rng, 16, 200)
	want := mustCompute(t, DefaultParams(), f.build(nil)).Hash()
	for k := range 20 {
		// Fresh maps each time: different insertion order, and Go randomises
		// iteration order per map.
		if got := mustCompute(t, DefaultParams(), f.build(rng)).Hash(); got != want {
			t.Fatalf("shuffle %d: hash %x, want %x", k, got, want)
		}
	}
	// Explicit zero weights and bonds, and -0 stakes, are the same as absent
	// or +0 ones.
	in := f.build(nil)
	for v := range in.Weights {
		in.Weights[v]["never-weighted"] = 0
	}
	in.PrevBonds[f.stakes[0].v]["never-bonded"] = 0
	if got := mustCompute(t, DefaultParams(), in).Hash(); got != want {
		t.Errorf("explicit zeros changed the hash")
	}
	z := Input{Stakes: map[string]float64{"A": 1, "B": 0}, Weights: map[string]map[string]float64{"A": {"m": 1}, "B": {"m": 1}}}
	h0 := mustCompute(t, DefaultParams(), z).Hash()
	z.Stakes["B"] = math.Copysign(0, -1)
	if mustCompute(t, DefaultParams(), z).Hash() != h0 {
		t.Errorf("-0 stake hashes differently from +0")
	}
}

func TestHashSensitivity(t *testing.T) {
	// Inputs: normalisation rounds many one-ulp input changes away (about
	// half of them here), so it is InputHash that makes Hash change.
	rng := rand.New(rand.NewPCG(3, 4))
	f := randomInput(rng, 6, 12)
	base := mustCompute(t, DefaultParams(), f.build(nil)).Hash()
	ulp := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }
	check := func(what string, mutate func(*flatInput)) {
		t.Helper()
		g := flatInput{
			stakes:  append([]entry(nil), f.stakes...),
			weights: append([]entry(nil), f.weights...),
			bonds:   append([]entry(nil), f.bonds...),
		}
		mutate(&g)
		if mustCompute(t, DefaultParams(), g.build(nil)).Hash() == base {
			t.Errorf("%s: hash unchanged", what)
		}
	}
	for k, e := range f.weights {
		check(fmt.Sprintf("weight %s→%s + 1 ulp", e.v, e.m), func(g *flatInput) { g.weights[k].x = ulp(e.x) })
	}
	for k, e := range f.stakes {
		check(fmt.Sprintf("stake %s + 1 ulp", e.v), func(g *flatInput) { g.stakes[k].x = ulp(e.x) })
	}
	for k, e := range f.bonds {
		check(fmt.Sprintf("bond %s→%s + 1 ulp", e.v, e.m), func(g *flatInput) { g.bonds[k].x = ulp(e.x) })
	}
	for _, p := range []Params{{Kappa: ulp(.5), BondAlpha: .1}, {Kappa: .5, BondAlpha: ulp(.1)}, {Kappa: .5, BondAlpha: .1, MinStake: 1e-300}, {Kappa: .5, BondAlpha: .1, NormalizeBonds: true}} {
		if mustCompute(t, p, f.build(nil)).Hash() == base {
			t.Errorf("params %+v: hash unchanged", p)
		}
	}

	// Outputs: every float of the result is hashed at full precision.
	r := mustCompute(t, DefaultParams(), f.build(nil))
	var fields []*float64
	for _, xs := range [][]float64{r.Consensus, r.Rank, r.Incentive, r.Stake, r.Trust, r.Dividends} {
		for k := range xs {
			fields = append(fields, &xs[k])
		}
	}
	for _, m := range [][][]float64{r.Clipped, r.Bonds} {
		for _, row := range m {
			for k := range row {
				fields = append(fields, &row[k])
			}
		}
	}
	fields = append(fields, &r.Agreement, &r.Params.Kappa, &r.Params.BondAlpha, &r.Params.MinStake)
	for k, x := range fields {
		old := *x
		*x = ulp(old)
		if r.Hash() == base {
			t.Errorf("output float %d (%v) + 1 ulp: hash unchanged", k, old)
		}
		*x = old
	}
	if r.Hash() != base {
		t.Fatal("restoring the result did not restore the hash")
	}
	r.Active[0] = !r.Active[0]
	if r.Hash() == base {
		t.Error("flipping Active: hash unchanged")
	}
}

func TestInvariantsRandom(t *testing.T) {
	// Properties that must hold for any valid input, over three chained
	// epochs and three values of κ.
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 60 {
		f := randomInput(rng, 1+rng.IntN(12), 1+rng.IntN(40))
		in := f.build(rng)
		var prevC []float64
		for _, kappa := range []float64{.3, .5, .8} {
			p := Params{Kappa: kappa, BondAlpha: .1}
			r := mustCompute(t, p, in)
			checkInvariants(t, fmt.Sprintf("trial %d κ=%v", trial, kappa), r)
			// Raising κ can only lower consensus.
			for j, c := range r.Consensus {
				if prevC != nil && c > prevC[j] {
					t.Errorf("trial %d: C_%d rose from %v to %v as κ rose to %v", trial, j, prevC[j], c, kappa)
				}
			}
			prevC = r.Consensus
		}
		for _, norm := range []bool{false, true} {
			r := mustCompute(t, Params{Kappa: .5, BondAlpha: .1, NormalizeBonds: norm}, in)
			in.PrevBonds = r.BondsMap()
			checkInvariants(t, fmt.Sprintf("trial %d chained", trial), r)
		}
	}
}

func TestMinorityBound(t *testing.T) {
	// Whatever validators holding under κ of the active stake publish, no
	// C_j exceeds the largest weight another validator gives miner j.
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 200 {
		n := 2 + rng.IntN(8)
		in := Input{Stakes: map[string]float64{}, Weights: map[string]map[string]float64{}}
		var total float64
		for i := range n {
			v := fmt.Sprintf("v%d", i)
			in.Stakes[v] = float64(1 + rng.IntN(100))
			total += in.Stakes[v]
			row := map[string]float64{}
			for j := range 6 {
				if rng.IntN(2) == 0 {
					row[fmt.Sprintf("m%d", j)] = rng.Float64()
				}
			}
			in.Weights[v] = row
		}
		// The coalition: validators in order while their stake stays < κ.
		bad := map[string]bool{}
		var badStake float64
		for i := range n {
			v := fmt.Sprintf("v%d", i)
			if badStake+in.Stakes[v] < .5*total {
				bad[v] = true
				badStake += in.Stakes[v]
			}
		}
		r := mustCompute(t, DefaultParams(), in)
		for j, m := range r.Miners {
			var honestMax float64
			for v, row := range in.Weights {
				var sum float64
				for _, w := range row {
					sum += w
				}
				if !bad[v] && sum > 0 && row[m]/sum > honestMax {
					honestMax = row[m] / sum
				}
			}
			if r.Consensus[j] > honestMax+1e-12 {
				t.Errorf("trial %d: C_%s = %v above every honest weight (max %v), coalition stake %v of %v",
					trial, m, r.Consensus[j], honestMax, badStake, total)
			}
		}
	}
}

func checkInvariants(t *testing.T, what string, r *Result) {
	t.Helper()
	sum := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	for _, v := range []struct {
		name string
		xs   []float64
	}{{"incentive", r.Incentive}, {"dividends", r.Dividends}} {
		if s := sum(v.xs); s != 0 && math.Abs(s-1) > 1e-9 {
			t.Errorf("%s: Σ %s = %v", what, v.name, s)
		}
	}
	if s := sum(r.Stake); s != 0 && math.Abs(s-1) > 1e-9 {
		t.Errorf("%s: Σ stake = %v", what, s)
	}
	if math.Abs(r.Agreement-sum(r.Rank)) > 1e-9 {
		t.Errorf("%s: agreement %v ≠ Σ rank %v", what, r.Agreement, sum(r.Rank))
	}
	for i := range r.Validators {
		if !(r.Trust[i] >= 0 && r.Trust[i] <= 1) {
			t.Errorf("%s: trust %v", what, r.Trust[i])
		}
	}
	for j := range r.Miners {
		if !(r.Consensus[j] >= 0 && r.Consensus[j] <= 1) {
			t.Errorf("%s: consensus %v", what, r.Consensus[j])
		}
		var col float64
		for i := range r.Validators {
			if r.Clipped[i][j] > r.Consensus[j] || r.Clipped[i][j] < 0 {
				t.Errorf("%s: clipped %v vs consensus %v", what, r.Clipped[i][j], r.Consensus[j])
			}
			if !(r.Bonds[i][j] >= 0 && r.Bonds[i][j] <= 1) {
				t.Errorf("%s: bond %v", what, r.Bonds[i][j])
			}
			col += r.Bonds[i][j]
		}
		if col > 1+1e-9 {
			t.Errorf("%s: bond column %d sums to %v", what, j, col)
		}
	}
	if r.Hash() != r.Hash() {
		t.Errorf("%s: Hash not stable", what)
	}
}

// BenchmarkCompute is Yuma consensus over 16 validators' weights of 100,
// 300 and 1,000 miners, and its hash.
func BenchmarkCompute(b *testing.B) {
	for _, miners := range []int{100, 300, 1000} {
		b.Run(fmt.Sprintf("miners=%d", miners), func(b *testing.B) { benchCompute(b, miners) })
	}
}

func benchCompute(b *testing.B, miners int) {
	rng := rand.New(rand.NewPCG(7, 8))
	in := Input{Stakes: map[string]float64{}, Weights: map[string]map[string]float64{}}
	for i := range 16 {
		v := fmt.Sprintf("val-%02d", i)
		in.Stakes[v] = float64(1 + rng.IntN(1_000_000))
		in.Weights[v] = map[string]float64{}
		for j := range miners {
			in.Weights[v][fmt.Sprintf("miner-%04d", j)] = rng.Float64()
		}
	}
	r, err := Compute(DefaultParams(), in)
	if err != nil {
		b.Fatal(err)
	}
	in.PrevBonds = r.BondsMap()
	b.Run("Compute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Compute(DefaultParams(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Hash()
		}
	})
}

// TestNoFusedMultiplyAdd compiles the package for arm64, where the Go
// compiler fuses x*y+z into one FMA unless the product is explicitly
// converted, and fails on any fused instruction: a fused sum would round
// differently from amd64 and split the network.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	cmd := exec.Command(gobin, "build", "-gcflags=-S", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%s", err, out)
	}
	fused := regexp.MustCompile(`\s(FMADDD|FMSUBD|FNMADDD|FNMSUBD)\s`)
	for _, line := range strings.Split(string(out), "\n") {
		if fused.MatchString(line) {
			t.Errorf("fused multiply-add: %s", strings.TrimSpace(line))
		}
	}
	if !strings.Contains(string(out), "TEXT") || !strings.Contains(string(out), "consensus.Compute") {
		t.Fatalf("no assembly listing for Compute in the build output")
	}
}

// goldenHash pins the result of a fixed three-epoch run. Every platform must
// reproduce it (CI on arm64 checks the FMA argument end to end); a change
// to the arithmetic or encoding must change it, and bump the domain
// strings' version with it.
const goldenHash = "bd08e8f5422a9b591a597163a9a7bd5a1ba116361a40ccdf93fef8275dd2ecb3"

func TestGoldenHash(t *testing.T) {
	// splitmix64, so the input does not depend on math/rand's algorithms.
	state := uint64(0x706f672d636f6e73)
	next := func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	unit := func() float64 { return float64(next()>>11) / (1 << 53) }
	in := Input{Stakes: map[string]float64{}}
	for i := range 16 {
		in.Stakes[fmt.Sprintf("val-%02d", i)] = 1 + unit()*1e6
	}
	var r *Result
	for range 3 {
		in.Weights = map[string]map[string]float64{}
		for i := range 16 {
			if next()%8 == 0 {
				continue
			}
			row := map[string]float64{}
			for j := range 100 {
				if next()%4 != 0 {
					row[fmt.Sprintf("miner-%03d", j)] = unit()
				}
			}
			in.Weights[fmt.Sprintf("val-%02d", i)] = row
		}
		r = mustCompute(t, DefaultParams(), in)
		in.PrevBonds = r.BondsMap()
	}
	if got := fmt.Sprintf("%x", r.Hash()); got != goldenHash {
		t.Errorf("hash %s, want %s", got, goldenHash)
	}
}
