package node

import (
	"maps"
	"math/bits"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/hostround"
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

// onSchedule says whether this miner serves a round (host: a host round)
// that validator opens now: from the owner of its slot, within the slot's
// opening window. A refusal is counted and logged, at powers of two so a
// flood does not flood the log.
func (m *miner) onSchedule(validator peer.ID, kind string) bool {
	r := m.n.view.slots
	if r == nil || r.opens(m.n.ID(), validator, len(m.gpus) > 0, time.Now()) {
		return true
	}
	if c := m.n.view.offScheduleCount(validator); bits.OnesCount64(c) == 1 {
		m.n.log.Warn("refusing a round off schedule: the validator does not own this slot's opening", "validator", validator, "kind", kind, "refused", c)
	}
	return false
}

// waitCap bounds each wait of a miner on a validator (the challenge, the
// reveal): streamDeadline, and proof_timeout where that is shorter.
func (m *miner) waitCap() time.Duration {
	return min(streamDeadline, m.n.cfg.Validator.ProofTimeout.Duration)
}

// hostChainMax is the longest run of host rounds a validator plays back to
// back: one set, one round of each kind.
const hostChainMax = hostround.KindPlot

// hostChain is the host rounds one validator is playing back to back.
type hostChain struct {
	validator peer.ID
	rounds    int
	ended     time.Time // the last one's end
}

// hostTurn says whether this miner serves a host round validator opens
// now. A validator plays a host set's kinds one after the other from its
// slot's opening: the first opens in the window, each next within
// openingLag of the previous one's end, at most hostChainMax in all.
func (m *miner) hostTurn(validator peer.ID) bool {
	m.mu.Lock()
	c := m.hostChain
	m.mu.Unlock()
	next := c.validator == validator && c.rounds < hostChainMax && time.Since(c.ended) <= openingLag
	if !next && !m.onSchedule(validator, "host") {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if next {
		m.hostChain.rounds++
	} else {
		m.hostChain = hostChain{validator: validator, rounds: 1}
	}
	return true
}

// hostEnded notes the end of validator's host round, from which its next
// kind may follow.
func (m *miner) hostEnded(validator peer.ID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hostChain.validator == validator {
		m.hostChain.ended = time.Now()
	}
}
