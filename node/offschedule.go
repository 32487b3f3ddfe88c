package node

import (
	"maps"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
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
