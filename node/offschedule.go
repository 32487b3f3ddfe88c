package node

import (
	"maps"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/round"
)

// Only a slot's owner challenges a miner, within the slot's opening window
// (SPEC.md §16): a listed validator challenging off schedule would hold
// the miner's host lock or queue places while honest owners' rounds miss.
// Gossip Rejects a challenge from a validator that owns no slot at all and
// Ignores one outside its signer's window (clocks differ), so neither is
// relayed; the miner refuses both before its queue or host lock. Each is
// counted against its signer, a listed validator: the count is bounded by
// the validator set.

// onSchedule decides on a challenge from validator to miner at now, under
// v.mu. Without a slot rule every validator may challenge at any time. The
// miner's kind is not in the challenge, so either kind's slots admit it.
func (v *view) onSchedule(validator, miner peer.ID, now time.Time) (decision, bool) {
	if v.slots == nil {
		return accept, true
	}
	switch {
	case !v.slots.staked(validator):
		v.noteOffSchedule(validator)
		return reject("challenge from a validator that owns no slot"), false
	case !v.slots.opens(miner, validator, true, now) && !v.slots.opens(miner, validator, false, now):
		v.noteOffSchedule(validator)
		return ignore("challenge outside its signer's slot opening window"), false
	}
	return accept, true
}

// noteOffSchedule counts an off-schedule challenge against validator, under
// v.mu.
func (v *view) noteOffSchedule(validator peer.ID) {
	v.offSchedule[validator]++
}

// offScheduleCount notes a round or host stream a miner refused as off
// schedule and returns validator's count so far.
func (v *view) offScheduleCount(validator peer.ID) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.noteOffSchedule(validator)
	return v.offSchedule[validator]
}

// OffSchedule is how many off-schedule challenges and round or host streams
// each listed validator sent this node (gossip and streams alike).
func (n *Node) OffSchedule() map[peer.ID]uint64 {
	n.view.mu.Lock()
	defer n.view.mu.Unlock()
	return maps.Clone(n.view.offSchedule)
}

// slotRule is the schedule as those challenged judge it: who may open a
// round with a miner, and when (SPEC.md §16). It owns every slot it draws
// an owner for (coverage 1), so an idle slot's drawn owner may open it:
// miners then need not share the validators' duty_cycle.
type slotRule struct {
	s        round.Schedule
	gpu, cpu time.Duration // slot lengths: round_target, round_target_cpu
}

// newSlotRule is the rule of the configured validator set, nil without
// one (local testing): validators schedule their rounds whenever the set
// is known, trust_any_validator or not.
func newSlotRule(stakes map[string]float64, c config.Config) *slotRule {
	r, ok := validator.ScheduleOf(stakes, c.Network.Validators, 1)
	if !ok {
		return nil
	}
	v := c.Validator
	return &slotRule{s: r, gpu: v.RoundTarget.Duration + v.RoundTarget.Duration/4, cpu: v.RoundTargetCPU.Duration + v.RoundTargetCPU.Duration/4}
}

// staked says whether validator owns any slot at all.
func (r *slotRule) staked(validator peer.ID) bool { return r.s.Index([]byte(validator)) >= 0 }

// opens says whether validator may open a round with miner at t, for a
// GPU miner or a CPU-only one.
func (r *slotRule) opens(miner, validator peer.ID, gpu bool, t time.Time) bool {
	s := r.s
	if s.Slot = r.cpu; gpu {
		s.Slot = r.gpu
	}
	return s.Opens([]byte(miner), s.Index([]byte(validator)), t, round.OpeningSkew, round.OpeningLag)
}
