package audit

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// A round record's evidence beyond its signatures (SPEC.md §21, §22.2): the
// work it states, a verified round's bounds, and what a failed round shows.

// ErrNoFailure marks a failed round whose evidence shows no failure.
var ErrNoFailure = errors.New("failed round whose evidence shows no failure")

// auditFLOPs checks the recorded work against the challenge's.
func auditFLOPs(r *store.RoundRecord, chain proof.Chain) error {
	if want := float64(chain.Steps) * round.StepFLOPs(chain); r.FLOPs != want {
		return fmt.Errorf("records %v FLOPs; the challenge's %d steps are %v", r.FLOPs, chain.Steps, want)
	}
	return nil
}

// auditBounds checks that a verified round's roots all arrived within the
// challenge's bounds, as the validator's state machine requires.
func auditBounds(r *store.RoundRecord, ch *pb.Challenge) error {
	first := (time.Duration(ch.FirstRootMs) * time.Millisecond).Nanoseconds()
	deadline := (time.Duration(ch.DeadlineMs) * time.Millisecond).Nanoseconds()
	switch a := r.StepArrivals; {
	case len(a) == 0:
		return nil // auditTiming reports the count
	case a[0] > first:
		return fmt.Errorf("verified, but the first root arrived after %v, bound %v", time.Duration(a[0]), time.Duration(first))
	case a[len(a)-1] > deadline:
		return fmt.Errorf("verified, but the last root arrived after %v, deadline %v", time.Duration(a[len(a)-1]), time.Duration(deadline))
	}
	return nil
}

// auditFailed checks that a failed round's evidence shows a failure, and
// returns how many proofs it verified. Facts the miner did not sign (no
// commitment, roots missing, tiles not served or not in the root) are the
// validator's word and are accepted as stated; once every sampled tile is
// proven in the miner's signed root, only a kept wrong tile that is in
// that root and fails recomputation shows the failure.
func auditFailed(r *store.RoundRecord, ch *pb.Challenge, chain proof.Chain) (int, error) {
	if len(r.Commitment) == 0 || len(r.StepArrivals) < chain.Steps {
		return 0, nil // no commitment, or roots missing
	}
	roots, err := OpenCommitment(r, chain)
	if err != nil {
		return 0, err
	}
	if len(r.Indices) == 0 {
		return 0, nil // ended before the sample (stream roots unlike the commitment's)
	}
	idx, err := chain.Sample(r.Secret, [32]byte(ch.SecretCommitment), roots, int(ch.Samples))
	if err != nil {
		return 0, err
	}
	if !slices.Equal(idx, r.Indices) {
		return 0, fmt.Errorf("sampled indices do not follow from the secret and roots")
	}
	if len(r.Tiles) == 0 || len(r.Leaves) == 0 {
		return 0, nil // tiles not served, or malformed
	}
	groups := chain.Groups(idx)
	if len(r.Proofs) != len(groups) {
		return 0, fmt.Errorf("%d proofs for %d sampled groups", len(r.Proofs), len(groups))
	}
	for i, g := range groups {
		if verifyGroup(r, roots, chain, g, i) != nil {
			return i, nil // tiles not in the root: the validator's leaves say so
		}
	}
	if r.BadTile == nil {
		return len(groups), fmt.Errorf("%w: every sampled tile is in the miner's root and no wrong tile is kept", ErrNoFailure)
	}
	if err := recheckBadTile(r, roots, chain, groups); err != nil {
		return len(groups), err
	}
	return len(groups), nil
}

// OpenCommitment checks a stored commitment (the validator stores only
// valid ones) and returns its roots, step-major.
func OpenCommitment(r *store.RoundRecord, chain proof.Chain) ([][]commit.CV, error) {
	mo, err := protocol.Open(r.Commitment, pb.MessageType_COMMITMENT)
	if err != nil {
		return nil, fmt.Errorf("commitment: %w", err)
	}
	cm := mo.Msg.(*pb.Commitment)
	switch {
	case mo.Author != peer.ID(r.Miner):
		return nil, fmt.Errorf("commitment signed by %s, not the miner", mo.Author)
	case [32]byte(cm.ChallengeId) != chain.ID:
		return nil, fmt.Errorf("commitment answers another challenge")
	case len(cm.Roots) != chain.Steps*chain.Subs():
		return nil, fmt.Errorf("commitment has %d roots for %d steps of %d sub-challenges", len(cm.Roots), chain.Steps, chain.Subs())
	}
	return Reshape(cm.Roots, chain.Subs()), nil
}

// verifyGroup checks group g's stored batch proof (the i-th) against its
// root, with the stored leaves.
func verifyGroup(r *store.RoundRecord, roots [][]commit.CV, chain proof.Chain, g proof.Group, i int) error {
	pr, err := commit.DecodeProof(r.Proofs[i])
	if err != nil {
		return fmt.Errorf("step %d sub-challenge %d proof: %w", g.Step, g.Sub, err)
	}
	leaves := make([]commit.CV, len(g.Tiles))
	for j := range leaves {
		leaves[j] = r.Leaves[g.First+j]
	}
	if err := commit.Verify(roots[g.Step][g.Sub], chain.Template[g.Sub].Tiles(), g.Tiles, leaves, pr); err != nil {
		return fmt.Errorf("step %d sub-challenge %d: %w", g.Step, g.Sub, err)
	}
	return nil
}

// recheckBadTile requires the kept tile to be the one the record's leaf
// names (so, by the verified proof, in the miner's root) and to fail
// recomputation.
func recheckBadTile(r *store.RoundRecord, roots [][]commit.CV, chain proof.Chain, groups []proof.Group) error {
	pos := slices.Index(r.Indices, r.BadTile.Index) // validate: present
	var g proof.Group
	for _, h := range groups {
		if pos >= h.First && pos < h.First+len(h.Tiles) {
			g = h
		}
	}
	local := g.Tiles[pos-g.First]
	if commit.TileCV(r.BadTile.Data, local) != r.Leaves[pos] {
		return fmt.Errorf("the kept wrong tile %d is not the tile its leaf commits to", r.BadTile.Index)
	}
	beacons := make([][32]byte, chain.Steps)
	for j := range beacons {
		beacons[j] = proof.Beacon(r.Secret, j)
	}
	ps, err := chain.StepParams(g.Step, roots, beacons)
	if err != nil {
		return fmt.Errorf("step %d: %w", g.Step, err)
	}
	var f *proof.Failure
	switch err := proof.CheckTile(ps[g.Sub], roots[g.Step][g.Sub], r.Secret, local, r.BadTile.Data); {
	case err == nil:
		return fmt.Errorf("%w: the kept wrong tile %d equals A·B", ErrNoFailure, r.BadTile.Index)
	case !errors.As(err, &f):
		return fmt.Errorf("re-checking tile %d: %w", r.BadTile.Index, err)
	}
	return nil
}

// StepArrivals is a round record's root arrivals as durations.
func StepArrivals(rec *store.RoundRecord) []time.Duration {
	arr := make([]time.Duration, len(rec.StepArrivals))
	for i, a := range rec.StepArrivals {
		arr[i] = time.Duration(a)
	}
	return arr
}

// Reshape splits step-major roots into steps of subs.
func Reshape(roots [][]byte, subs int) [][]commit.CV {
	out := make([][]commit.CV, 0, len(roots)/subs)
	for i := 0; i+subs <= len(roots); i += subs {
		step := make([]commit.CV, subs)
		for j := range step {
			step[j] = commit.CV(roots[i+j])
		}
		out = append(out, step)
	}
	return out
}
