package node

import (
	"errors"
	"maps"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// Only a slot's owner challenges a miner, within the slot's opening window
// (SPEC.md §16): a listed validator challenging off schedule would hold
// the miner's host lock or queue places while honest owners' rounds miss.
// Gossip Rejects a challenge from a validator that owns no slot at all and
// Ignores one outside its signer's window (clocks differ), so neither is
// relayed; the miner refuses both before its queue or host lock, and keeps
// a signed one that came on a round stream as evidence (store.OffSchedule).
// Each is counted against its signer if it is listed, so the count is
// bounded by the validator set; one from a signer without stake, which no
// clock explains, also costs it a strike of peer score.

// onSchedule decides on a challenge from validator to miner at now, under
// v.mu. Without a slot rule every validator may challenge at any time. The
// miner's kind is not in the challenge, so either kind's slots admit it.
func (v *view) onSchedule(validator, miner peer.ID, now time.Time) (decision, bool) {
	if v.slots == nil {
		return accept, true
	}
	switch {
	case !v.slots.Staked(validator):
		v.noteOffSchedule(validator, now)
		return reject("challenge from a validator that owns no slot"), false
	case !v.slots.Opens(miner, validator, true, now) && !v.slots.Opens(miner, validator, false, now):
		v.noteOffSchedule(validator, now)
		return ignore("challenge outside its signer's slot opening window"), false
	}
	return accept, true
}

// noteOffSchedule counts an off-schedule challenge against validator if it
// is listed, and strikes one without stake, under v.mu.
func (v *view) noteOffSchedule(validator peer.ID, now time.Time) {
	if !v.validators[validator] {
		return
	}
	v.offSchedule[validator]++
	if v.slots != nil && !v.slots.Staked(validator) {
		s := v.strikes[validator]
		if s == nil {
			s = &strike{at: now}
			v.strikes[validator] = s
		}
		s.n, s.at = decayed(s.n, now.Sub(s.at))+1, now
	}
}

// offScheduleCount notes a round or host stream a miner refused as off
// schedule and returns validator's count so far.
func (v *view) offScheduleCount(validator peer.ID) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.noteOffSchedule(validator, time.Now())
	return v.offSchedule[validator]
}

// keepOffSchedule stores a challenge envelope that from sent on a round
// stream this miner refused as off schedule at at: signed by from, for
// this miner, it is evidence against its signer that anyone can check.
func (n *Node) keepOffSchedule(raw []byte, from peer.ID, at time.Time) error {
	o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
	if err != nil {
		return err
	}
	if o.Author != from || string(o.Msg.(*pb.Challenge).Miner) != string(n.ID()) {
		return errors.New("not a challenge from the stream's peer to this miner")
	}
	_, err = n.store.PutOffSchedule(store.OffSchedule{Epoch: n.view.epochAt(at), Signer: []byte(from),
		ID: protocol.ID(o.Body), At: at.UnixNano(), Envelope: raw})
	return err
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
	v := c.Validator
	r, ok := validator.ScheduleOf(stakes, c.Network.Validators, 1, v)
	if !ok {
		return nil
	}
	return &slotRule{s: r, gpu: round.SlotFor(v.RoundTarget.Duration), cpu: round.SlotFor(v.RoundTargetCPU.Duration)}
}

// SlotRule is the rule of the validator set at stakes (else
// network.validators at stake 1) with c's round targets, nil without a
// set: what a public audit judges the off-schedule challenges a node keeps
// by, as the node judged them.
func SlotRule(stakes map[string]float64, c config.Config) audit.SlotRule {
	if r := newSlotRule(stakes, c); r != nil {
		return r
	}
	return nil // not a nil *slotRule in the interface
}

// Staked says whether validator owns any slot at all.
func (r *slotRule) Staked(validator peer.ID) bool { return r.s.Index([]byte(validator)) >= 0 }

// Opens says whether validator may open a round with miner at t, for a
// GPU miner or a CPU-only one.
func (r *slotRule) Opens(miner, validator peer.ID, gpu bool, t time.Time) bool {
	s := r.s
	if s.Slot = r.cpu; gpu {
		s.Slot = r.gpu
	}
	return s.Opens([]byte(miner), s.Index([]byte(validator)), t, round.OpeningSkew, round.OpeningLag)
}

// ownedMax bounds the slots Owned walks: a day of 1.25 s slots.
const ownedMax = 1 << 16

// Owned counts miner's slots (GPU or CPU-only) that validator owns and
// whose opening window closed in (from, to], at most limit: the slots it
// should have opened a round in.
func (r *slotRule) Owned(miner, validator peer.ID, gpu bool, from, to time.Time, limit int) int {
	s := r.s
	if s.Slot = r.cpu; gpu {
		s.Slot = r.gpu
	}
	v := s.Index([]byte(validator))
	if v < 0 {
		return 0
	}
	shut := s.Slot/8 + round.OpeningLag // a window's close after its slot's start
	n := 0
	for j, i := s.SlotAt(from.Add(-shut))+1, 0; n < limit && i < ownedMax && !s.Start(j).Add(shut).After(to); j, i = j+1, i+1 {
		if s.Start(j).Add(shut).After(from) && s.Owner([]byte(miner), j) == v {
			n++
		}
	}
	return n
}

// HostOpens says whether validator may open a host set with any miner at
// t: it owns a host slot whose opening window holds t.
func (r *slotRule) HostOpens(validator peer.ID, t time.Time) bool {
	return r.s.HostOpens(r.s.Index([]byte(validator)), t, round.OpeningSkew, round.OpeningLag)
}
