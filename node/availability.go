package node

import (
	"regexp"
	"strings"

	"github.com/pog-network/pog/store"
)

// missedPrefixes start the reasons of rounds the miner never answered: the
// stream could not be opened or written, it closed, or no first root or no
// commitment came. None proves a fault (a crash, a restart or a cut link
// looks the same), so they lower availability instead of failing the epoch.
var missedPrefixes = []string{
	"open round stream:",
	"sending challenge:",
	"publishing challenge:", // the validator's own gossip failed
	"round stream closed:",
	"no first root within ",
}

// missedSteps is the deadline reason of a miner that stopped answering
// before its commitment.
var missedSteps = regexp.MustCompile(`^\d+ of \d+ steps and no commitment within `)

// MissedRound tells a missed round from a proven fault by the record's
// reason. Only a round without a commitment can be missed: once the miner has
// committed, a closed stream or a missing tile is a refusal to prove, a fault.
func MissedRound(r *store.RoundRecord) bool {
	if r.Verdict != store.VerdictFailed || len(r.Commitment) > 0 {
		return false
	}
	for _, p := range missedPrefixes {
		if strings.HasPrefix(r.Reason, p) {
			return true
		}
	}
	return missedSteps.MatchString(r.Reason)
}
