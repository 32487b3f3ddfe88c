package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// lazyBackend commits to, and serves, an output whose even tiles were never
// computed (zeros): its rounds fail on a wrong tile that is in its root.
type lazyBackend struct{ cpu.Backend }

func (b lazyBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	return lazyJob{j, p}, err
}

func (b lazyBackend) ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error {
	err := b.Backend.ComputeTile(ctx, p, i, dst)
	if i%2 == 0 {
		clear(dst)
	}
	return err
}

type lazyJob struct {
	kernels.Job
	p proof.Params
}

func (j lazyJob) TileCVs(context.Context) ([]commit.CV, error) {
	cvs := make([]commit.CV, j.p.Tiles())
	tile := make([]byte, j.p.TileBytes())
	for i := range cvs {
		if err := j.Job.Tile(uint64(i), tile); err != nil {
			return nil, err
		}
		if i%2 == 0 {
			clear(tile)
		}
		cvs[i] = commit.TileCV(tile, uint64(i))
	}
	return cvs, nil
}

// liveRounds runs a validator against an honest and a lazy miner, on a
// simulated network in the caller's bubble, until it has stored a verified
// round and a failed one that kept a wrong tile.
func liveRounds(t *testing.T) (verified, bad *store.RoundRecord) {
	tn := newSimTestNet(t)
	cfg := testConfig()
	v := tn.start(RoleValidator, cfg, nil)
	tn.connect(tn.start(RoleMiner, cfg, cpu.Backend{}), v)
	tn.connect(tn.start(RoleMiner, cfg, lazyBackend{}), v)
	deadline := time.After(60 * time.Second)
	for verified == nil || bad == nil {
		select {
		case r := <-tn.records:
			switch {
			case r.Verdict == store.VerdictVerified:
				verified = r
			case r.BadTile != nil:
				bad = r
			}
		case <-deadline:
			t.Fatal("no verified round and failed round with a wrong tile within 60 s")
		}
	}
	return verified, bad
}

func clone(r *store.RoundRecord) *store.RoundRecord {
	c := *r
	c.Proofs, c.Leaves = slices.Clone(r.Proofs), slices.Clone(r.Leaves)
	if r.BadTile != nil {
		c.BadTile = &store.TileData{Index: r.BadTile.Index, Data: slices.Clone(r.BadTile.Data)}
	}
	return &c
}

func failIt(r *store.RoundRecord) {
	r.Verdict, r.Reason, r.TFLOPS, r.PeakTFLOPS = store.VerdictFailed, "failed", 0, 0
}

// correctTile is sampled tile pos of r as an honest miner computes it.
func correctTile(t *testing.T, r *store.RoundRecord, pos int) *store.TileData {
	t.Helper()
	co, err := protocol.Open(r.Challenge, pb.MessageType_CHALLENGE)
	if err != nil {
		t.Fatal(err)
	}
	ch := co.Msg.(*pb.Challenge)
	params, _ := protocol.ChallengeParams(ch)
	chain := proof.Chain{ID: protocol.ID(co.Body), Template: params, Steps: int(ch.Steps)}
	roots, err := audit.OpenCommitment(r, chain)
	if err != nil {
		t.Fatal(err)
	}
	beacons := make([][32]byte, chain.Steps)
	for j := range beacons {
		beacons[j] = proof.Beacon(r.Secret, j)
	}
	step, sub, local := chain.Locate(r.Indices[pos])
	ps, err := chain.StepParams(step, roots, beacons)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, ps[sub].TileBytes())
	if err := (cpu.Backend{}).ComputeTile(context.Background(), ps[sub], local, data); err != nil {
		t.Fatal(err)
	}
	return &store.TileData{Index: r.Indices[pos], Data: data}
}

// TestAuditRoundEvidence: real rounds audit clean; a verified round whose
// work, throughput or proofs are not what it states, and a failed round
// whose evidence shows no failure, are each flagged. Facts the miner did
// not sign (a missing commitment) are accepted as the validator states them.
func TestAuditRoundEvidence(t *testing.T) {
	var verified, bad *store.RoundRecord
	synctest.Test(t, func(t *testing.T) { verified, bad = liveRounds(t) })
	for name, r := range map[string]*store.RoundRecord{"verified": verified, "failed with a wrong tile": bad} {
		if _, err := audit.Round(r, false); err != nil {
			t.Fatalf("%s round fails its audit: %v", name, err)
		}
	}
	cases := []struct {
		name, want string
		from       *store.RoundRecord
		edit       func(r *store.RoundRecord)
	}{
		{"verified round marked failed", "every sampled tile is in the miner's root", verified, failIt},
		{"honest tile kept as wrong", "equals A·B", verified, func(r *store.RoundRecord) {
			failIt(r)
			r.BadTile = correctTile(t, r, 0)
		}},
		{"wrong tile dropped", "no wrong tile is kept", bad, func(r *store.RoundRecord) { r.BadTile = nil }},
		{"wrong tile replaced by the correct one", "is not the tile its leaf commits to", bad, func(r *store.RoundRecord) {
			r.BadTile = correctTile(t, r, slices.Index(r.Indices, r.BadTile.Index))
		}},
		{"verified without proofs", "verified with 0 proofs and 0 leaves", verified, func(r *store.RoundRecord) { r.Proofs, r.Leaves = nil, nil }},
		{"work overstated", "FLOPs; the challenge's", verified, func(r *store.RoundRecord) { r.FLOPs *= 2 }},
		{"failed round's work overstated", "FLOPs; the challenge's", bad, func(r *store.RoundRecord) { r.FLOPs *= 2 }},
		{"throughput overstated", "does not follow from the root arrivals", verified, func(r *store.RoundRecord) { r.TFLOPS *= 2 }},
		{"arrivals compressed", "does not follow from the root arrivals", verified, func(r *store.RoundRecord) {
			for i := range r.StepArrivals {
				r.StepArrivals[i] /= 2
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := clone(c.from)
			r.StepArrivals = slices.Clone(c.from.StepArrivals)
			c.edit(r)
			_, err := audit.Round(r, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("audit: %v, want an error containing %q", err, c.want)
			}
			// The first three are failures the evidence does not show.
			if noFailure := strings.Contains(c.want, "tile is") || strings.Contains(c.want, "A·B") || strings.Contains(c.want, "no wrong tile"); noFailure != errors.Is(err, audit.ErrNoFailure) {
				t.Fatalf("%v: wraps errNoFailure: %v, want %v", err, !noFailure, noFailure)
			}
		})
	}
	// The validator's word: no commitment arrived.
	r := clone(verified)
	failIt(r)
	r.Commitment, r.CommitNanos = nil, 0
	if _, err := audit.Round(r, false); err != nil {
		t.Fatalf("a failed round without a commitment: %v", err)
	}
}
