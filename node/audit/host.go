package audit

import (
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/store"
)

// Host re-checks a host record (SPEC §23.8): its challenge binds the
// miner and commits to the secret; a verified record's root arrived in
// time and its opening verifies for the segments the secret samples; a
// failed one with an opening shows a failure. Facts the miner did not
// commit to (no root, no opening, a broken stream) are the validator's
// word, as for round records.
func Host(r *store.HostRecord) error {
	ch, err := hostround.DecodeChallenge(r.Challenge)
	switch {
	case err != nil:
		return fmt.Errorf("challenge: %w", err)
	case peer.ID(ch.Proof.MinerID()) != peer.ID(r.Miner):
		return errors.New("challenge names another miner")
	case sample.Commit(r.Secret) != ch.Commitment:
		return errors.New("secret does not match the challenge's commitment")
	}
	if r.Verdict == store.VerdictVerified && r.RootNanos > (time.Duration(ch.RootByMs)*time.Millisecond).Nanoseconds() {
		return fmt.Errorf("verified, but the root arrived after %v, bound %d ms", time.Duration(r.RootNanos), ch.RootByMs)
	}
	if len(r.Opening) == 0 {
		if r.Verdict == store.VerdictVerified {
			return errors.New("verified without an opening")
		}
		return nil
	}
	verr := ch.Proof.Verify(r.Root, ch.Segments(r.Secret, r.Root), r.Opening)
	switch {
	case r.Verdict == store.VerdictVerified && verr != nil:
		return fmt.Errorf("verified, but the opening does not verify: %w", verr)
	case r.Verdict != store.VerdictVerified && !r.Missed && verr == nil:
		return fmt.Errorf("%w: the kept opening verifies", ErrNoFailure)
	}
	return nil
}

// auditHosts re-checks the host records of epochs since..last that want
// selects and returns how many it checked and the problems found.
func auditHosts(st *store.Store, since, last uint64, want func(uint64) bool) (int, []string) {
	n := 0
	var problems []string
	for r, err := range st.HostRounds(since, last) {
		if err != nil {
			return n, append(problems, fmt.Sprintf("host records: %v", err))
		}
		if !want(r.Epoch) {
			continue
		}
		n++
		if err := Host(r); err != nil {
			problems = append(problems, fmt.Sprintf("host record epoch %d round %d miner %s: %v", r.Epoch, r.Round, peer.ID(r.Miner), err))
		}
	}
	return n, problems
}
