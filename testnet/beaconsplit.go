package testnet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// The beacon-split validator is a staked validator that, at the end of
// each RAM period, publishes its record for the period's last epoch and a
// second, different one for it at once (adversary.SplitBeacon): when the
// RAM seed was drawn from epoch records, that split it between nodes
// (SPEC.md §23.9). The run's RAM period is then beaconSplitPeriod epochs,
// so every run of two or more full epochs crosses a period boundary, and
// the check requires that no honest miner refuses a RAM round for a seed
// it does not hold and that each honest miner with a dataset is verified
// in the new period's first epoch.
const (
	beaconSplitName   = "validator-beacon-split"
	beaconSplitPeriod = 2
	// notHeld is how a miner refuses a RAM challenge for a dataset (a
	// seed) it does not hold.
	notHeld = "dataset this miner does not hold"
)

// beaconSplit is what the run watches while the beacon-split validator
// plays: honest miners' RAM refusals for a seed they do not hold.
type beaconSplit struct {
	mu      sync.Mutex
	seen    map[string]time.Time // miner name → the latest refusal noted
	refused map[string]int       // miner name → refusals
	watched bool                 // in process: miners' rounds were read
}

// ramPeriodEpochs is network.ram_period_epochs for the run: the scaled
// beaconSplitPeriod with the beacon-split validator, else 0 (the
// testnet's own).
func (r *run) ramPeriodEpochs() uint64 {
	if containsStr(r.cfg.Adversaries, "beacon-split") {
		return beaconSplitPeriod
	}
	return 0
}

// watchSeedRefusals notes, until ctx ends, each host round an honest
// miner in this process refused for a RAM dataset it does not hold.
func (r *run) watchSeedRefusals(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.EpochLength / 8)
	defer t.Stop()
	for {
		r.noteSeedRefusals()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *run) noteSeedRefusals() {
	r.mu.Lock()
	var miners []*member
	for _, m := range r.members {
		if m.node != nil && m.info.Role == "miner" && m.info.Adversary == "" {
			miners = append(miners, m)
		}
	}
	r.mu.Unlock()
	b := r.split
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range miners {
		b.watched = true
		for _, h := range m.node.Snapshot().HostPlayed {
			if strings.Contains(h.Error, notHeld) && h.At.After(b.seen[m.info.Name]) {
				b.seen[m.info.Name] = h.At
				b.refused[m.info.Name]++
			}
		}
	}
}

// beaconSplitCheck: across the first RAM period boundary of the run's
// full epochs from..to, the beacon-split validator equivocated the old
// period's last epoch, no honest miner refused a RAM round for its seed,
// and each honest miner was verified in a RAM round of the new period
// (its epochs within the run) by a validator other than the beacon-split
// one. Any other validator will do: each derives the seed as an honest
// node does (the dishonest one alters only its weights, the equivocator
// only its records), and host slots are few (a slot in eight is one, each
// owned by one validator for every miner), so an epoch's often all fall
// to adversarial validators.
func (r *run) beaconSplitCheck(from, to uint64) report.Check {
	name := "beacon-split: no honest miner loses a RAM round across the RAM period boundary"
	b := from
	for b%beaconSplitPeriod != 0 {
		b++
	}
	if b > to {
		return check(name, false, "the run's epochs %d–%d cross no RAM period boundary", from, to)
	}
	split := r.memberNamed(beaconSplitName)
	if split == nil {
		return check(name, false, "no beacon-split validator ran")
	}
	proofs := len(adversary.EquivocationFound(split.id, r.holders(split), 0))
	last := min(to, b+beaconSplitPeriod-1)
	verified, missing := r.ramVerified(b, last, split)
	r.noteSeedRefusals()
	r.split.mu.Lock()
	refused, watched := fmt.Sprint(r.split.refused), r.split.watched
	ok := proofs > 0 && len(missing) == 0 && len(r.split.refused) == 0
	r.split.mu.Unlock()
	if !watched {
		refused = "not read (miners in child processes)"
	}
	return check(name, ok, "boundary at epoch %d: %d nodes hold the proof that %s equivocated epoch %d there; "+
		"honest miners' RAM refusals for a seed not held: %s; verified RAM rounds in epochs %d–%d: %v; none: %v",
		b, proofs, beaconSplitName, b-1, refused, b, last, verified, missing)
}

// ramVerified counts, per honest miner with a dataset, the verified RAM
// rounds validators but except stored for it in epochs from..to, and names
// those with none.
func (r *run) ramVerified(from, to uint64, except *member) (map[string]int, []string) {
	verified := map[string]int{}
	for _, v := range r.members {
		if v.store == nil || v.info.Role != "validator" || v == except {
			continue
		}
		for h, err := range v.store.HostRounds(from, to) {
			if err != nil || h.Verdict != record.VerdictVerified {
				continue
			}
			if ch, err := hostround.DecodeChallenge(h.Challenge); err == nil && ch.Proof.Kind() == hostround.KindRAM {
				verified[r.nameOf(peer.ID(h.Miner).String())]++
			}
		}
	}
	var missing []string
	struck := r.struck()
	for _, m := range r.members {
		// Every profile holds a dataset; the late joiner and a miner a
		// fault struck may have been away.
		away := m.info.Name == lateJoinName || struck[m.info.Name] || slices.Contains(r.cutNames, m.info.Name)
		if m.info.Role == "miner" && m.info.Adversary == "" && !away && verified[m.info.Name] == 0 {
			missing = append(missing, m.info.Name)
		}
	}
	return verified, missing
}
