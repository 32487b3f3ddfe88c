package node

import (
	"bytes"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
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

// slotSchedule is the schedule template (all but the slot length) and
// self's index in it; nil if there is no set or self is not in it.
type slotSchedule struct {
	round.Schedule
	self int
}

func newSlotSchedule(self peer.ID, stakes map[string]float64, listed []string, coverage float64) *slotSchedule {
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
	s := &slotSchedule{Schedule: round.Schedule{Coverage: coverage}, self: -1}
	for i, m := range ms {
		s.Validators, s.Stakes = append(s.Validators, m.id), append(s.Stakes, m.stake)
		if peer.ID(m.id) == self {
			s.self = i
		}
	}
	if s.self < 0 {
		return nil
	}
	return s
}

// forMiner is the schedule of a miner whose rounds last target.
func (s *slotSchedule) forMiner(target time.Duration) round.Schedule {
	r := s.Schedule
	r.Slot = target + target/4
	return r
}

// nextSlot is the start of the first slot self owns with miner p that can
// still be started at or after t: a slot is startable in its first eighth,
// so that a round never runs into the next owner's slot.
func (s *slotSchedule) nextSlot(p peer.ID, ann *pb.MinerAnnounce, cfg ValidatorConfig, t time.Time) time.Time {
	r := s.forMiner(roundTarget(cfg, ann))
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
func (s *slotSchedule) due(p peer.ID, e *minerEntry, cfg ValidatorConfig, now time.Time) bool {
	slot := s.forMiner(roundTarget(cfg, e.ann)).Slot
	if e.next.IsZero() || now.After(e.next.Add(slot/8)) {
		e.next = s.nextSlot(p, e.ann, cfg, now)
	}
	return !now.Before(e.next)
}
