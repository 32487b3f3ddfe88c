package epoch

import (
	"regexp"
	"strings"

	"github.com/pog-network/pog/store"
)

// NoShowPrefix starts the reason of a no-show: an owned slot whose opening
// window passed with the miner not connected to this validator.
const NoShowPrefix = "no-show: "

// missedPrefixes start the reasons of rounds the miner never answered in
// time: the stream could not be opened or written, it closed, no first root
// or no commitment came, or a root came after its bound. None proves a
// fault (a crash, a restart, a cut link or a loaded machine look the
// same), so they lower availability instead of failing the epoch.
var missedPrefixes = []string{
	NoShowPrefix, // not connected in an owned slot
	"open round stream:",
	"sending challenge:",
	"publishing challenge:", // the validator's own gossip failed
	"round stream closed:",
	"no first root within ",
	"first root after ",
}

// missedSteps are the deadline reasons of a miner that stopped answering,
// or answered late, before its commitment.
var missedSteps = regexp.MustCompile(`^(\d+ of \d+ steps and no commitment within |step \d+ root after the )`)

// unansweredTiles is the reason of a round whose sampled tiles never came
// after the commitment. It is missed too, since withholding gains nothing: a
// miner that computes a share 1 − ε of each round's tiles and withholds the
// tiles whenever a sample hits the rest is paid for a share (1 − ε)^k of its
// rounds (k samples) for 1 − ε of the work (SPEC §18).
const unansweredTiles = "tile request unanswered: "

// MissedRound tells a missed round from a proven fault by the record's
// reason. A round with a commitment is missed only if its tiles never came;
// a wrong, refused or malformed answer is a fault.
func MissedRound(r *store.RoundRecord) bool {
	if r.Verdict != store.VerdictFailed {
		return false
	}
	if strings.HasPrefix(r.Reason, unansweredTiles) {
		return true
	}
	if len(r.Commitment) > 0 {
		return false
	}
	for _, p := range missedPrefixes {
		if strings.HasPrefix(r.Reason, p) {
			return true
		}
	}
	return missedSteps.MatchString(r.Reason)
}
