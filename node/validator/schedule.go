package validator

import (
	"bytes"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// Slot schedule (SPEC.md §16). With a known validator set (genesis stakes,
// else network.validators at stake 1) validators take turns at each miner
// in slots of 5/4 of its round target, each slot owned by one validator or
// idle, validator.duty_cycle being the owned share; without one (local
// testing with trust_any_validator) each validator pauses at random.

// scheduleHorizon bounds how many slots ahead a validator looks for its
// next one with a miner: a validator with a thousandth of the stake at full
// coverage waits 1,000 slots on average.
const scheduleHorizon = 1 << 16

// SlotSchedule is the schedule template (all but the slot length) and
// self's index in it; nil if there is no set or self is not in it.
type SlotSchedule struct {
	round.Schedule
	self int
}

// NewSlotSchedule is self's schedule of the validator set (genesis stakes,
// else listed at stake 1) owning cfg's duty_cycle share of slots.
func NewSlotSchedule(self peer.ID, stakes map[string]float64, listed []string, cfg config.ValidatorConfig) *SlotSchedule {
	r, ok := ScheduleOf(stakes, listed, cfg.DutyCycle, cfg)
	if !ok {
		return nil
	}
	// A listed validator without stake owns no slot, so it starts no
	// rounds: miners would refuse them (onSchedule).
	return &SlotSchedule{Schedule: r, self: r.Index([]byte(self))}
}

// ScheduleOf is the schedule template of a validator set (genesis stakes,
// else network.validators at stake 1) at coverage, with cfg's host slots
// (none if cfg plays no host rounds); ok is false if there is no set.
func ScheduleOf(stakes map[string]float64, listed []string, coverage float64, cfg config.ValidatorConfig) (round.Schedule, bool) {
	set := map[string]float64{}
	for v, st := range stakes {
		set[v] = st
	}
	if len(set) == 0 {
		for _, v := range listed {
			set[v] = 1
		}
	}
	type member struct {
		id    []byte
		stake float64
	}
	var ms []member
	for v, st := range set {
		id, err := peer.Decode(v)
		if err != nil || st <= 0 {
			continue // stake 0 owns nothing; a bad ID was refused at load
		}
		ms = append(ms, member{[]byte(id), st})
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.id, b.id) })
	r := round.Schedule{Coverage: coverage}
	if cfg.HostCPUWindow.Duration > 0 || cfg.HostRAMSteps > 0 || cfg.HostPlotSteps > 0 {
		r.HostSlot, r.HostShare = round.SlotFor(cfg.RoundTarget.Duration), cfg.HostSlotShare
	}
	for _, m := range ms {
		r.Validators, r.Stakes = append(r.Validators, m.id), append(r.Stakes, m.stake)
	}
	return r, len(ms) > 0
}

// ForMiner is the schedule of a miner whose rounds last target.
func (s *SlotSchedule) ForMiner(target time.Duration) round.Schedule {
	r := s.Schedule
	r.Slot = round.SlotFor(target)
	return r
}

// nextSlot is the start of the first slot self owns with miner p that can
// still be started at or after t: a slot is startable in its first eighth,
// so that a round never runs into the next owner's slot.
func (s *SlotSchedule) nextSlot(p peer.ID, ann *pb.MinerAnnounce, cfg config.ValidatorConfig, t time.Time) time.Time {
	r := s.ForMiner(plan.RoundTarget(cfg, ann))
	from := r.SlotAt(t)
	if t.After(r.Start(from).Add(r.Slot / 8)) {
		from++
	}
	j, ok := r.Next([]byte(p), s.self, from, scheduleHorizon)
	if !ok {
		return t.Add(scheduleHorizon * r.Slot)
	}
	return r.Start(j)
}

// due says whether self may start a round with miner p at now, moving the
// entry's next slot on if it was missed.
func (s *SlotSchedule) due(p peer.ID, e *minerEntry, cfg config.ValidatorConfig, now time.Time) bool {
	slot := s.ForMiner(plan.RoundTarget(cfg, e.ann)).Slot
	if e.next.IsZero() || now.After(e.next.Add(slot/8)) {
		e.next = s.nextSlot(p, e.ann, cfg, now)
	}
	return !now.Before(e.next)
}

// nextHost is the start of the first host slot self owns that opens at or
// after t (the zero time if none within the horizon).
func (s *SlotSchedule) nextHost(t time.Time) time.Time {
	if s.HostShare == 0 {
		return time.Time{}
	}
	from := uint64(max(0, t.UnixNano()-1)/int64(s.HostSlot)) + 1
	k, ok := s.NextHost(s.self, from, scheduleHorizon)
	if !ok {
		return time.Time{}
	}
	return s.HostStart(k)
}
