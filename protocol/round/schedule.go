package round

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"lukechampine.com/blake3"
)

// Schedule splits every miner's time into aligned slots and gives each
// slot to at most one validator (SPEC.md §16). Slot j of any miner spans
// [j·Slot, (j+1)·Slot) of Unix time. It is idle with probability
// 1 − Coverage, else owned by a validator drawn by stake, both from
// H("pog/schedule/v1" ‖ miner ‖ j). Every validator computes the same
// owners, so honest validators' rounds never overlap at one miner, and
// identities that share one device have their rounds at the same times:
// its idle time between rounds serves none of them.
type Schedule struct {
	Slot       time.Duration
	Coverage   float64   // share of slots owned, in (0, 1]
	Validators [][]byte  // peer IDs in byte order, distinct
	Stakes     []float64 // each > 0, parallel to Validators
}

const scheduleDomain = "pog/schedule/v1"

// Validate reports a schedule no slot can be drawn from.
func (s Schedule) Validate() error {
	switch {
	case s.Slot <= 0:
		return errors.New("schedule: slot length must be positive")
	case !(s.Coverage > 0 && s.Coverage <= 1):
		return errors.New("schedule: coverage must be in (0, 1]")
	case len(s.Validators) == 0 || len(s.Validators) != len(s.Stakes):
		return errors.New("schedule: want one stake per validator, at least one")
	}
	for i, st := range s.Stakes {
		if !(st > 0) || math.IsInf(st, 0) {
			return errors.New("schedule: stakes must be positive and finite")
		}
		if i > 0 && string(s.Validators[i-1]) >= string(s.Validators[i]) {
			return errors.New("schedule: validators must be sorted and distinct")
		}
	}
	return nil
}

// Owner is the index of slot j's owner for miner, or −1 if it is idle.
// The draw uses integers and one product, so every platform agrees: r1 <
// ⌊Coverage·2⁶⁴⌋ makes the slot owned, and x = (r2 >> 11)·2⁻⁵³·ΣStakes
// picks the first validator whose running stake sum exceeds x.
func (s Schedule) Owner(miner []byte, j uint64) int {
	h := blake3.New(32, nil)
	h.Write([]byte(scheduleDomain))
	h.Write(miner)
	h.Write(binary.LittleEndian.AppendUint64(nil, j))
	d := h.Sum(nil)
	r1, r2 := binary.LittleEndian.Uint64(d[0:8]), binary.LittleEndian.Uint64(d[8:16])
	if s.Coverage < 1 && r1 >= uint64(math.Ldexp(s.Coverage, 64)) {
		return -1
	}
	var total float64
	for _, st := range s.Stakes {
		total += st
	}
	x := math.Ldexp(float64(r2>>11), -53) * total
	var sum float64
	for i, st := range s.Stakes {
		if sum += st; x < sum {
			return i
		}
	}
	return len(s.Stakes) - 1 // x rounded up to the total
}

// SlotAt is the slot holding t.
func (s Schedule) SlotAt(t time.Time) uint64 { return uint64(t.UnixNano() / int64(s.Slot)) }

// Start is when slot j begins.
func (s Schedule) Start(j uint64) time.Time { return time.Unix(0, int64(j)*int64(s.Slot)) }

// Next is the first slot at or after from that validator self owns for
// miner, looking at most horizon slots ahead; ok is false if there is none
// (always for self −1, no validator: idle slots are not its).
func (s Schedule) Next(miner []byte, self int, from uint64, horizon int) (j uint64, ok bool) {
	if self < 0 {
		return 0, false
	}
	for j = from; j < from+uint64(horizon); j++ {
		if s.Owner(miner, j) == self {
			return j, true
		}
	}
	return 0, false
}

// Index is validator's position in the schedule, or −1 if it owns no
// slots (unlisted, or listed at stake 0).
func (s Schedule) Index(validator []byte) int {
	for i, v := range s.Validators {
		if string(v) == string(validator) {
			return i
		}
	}
	return -1
}

// A slot's opening window, as a miner and gossip judge it: clocks may
// differ by up to OpeningSkew, and a challenge reaches the miner up to
// OpeningLag after its validator started the round (three pings and one
// trip: round trips of up to half a second, which a round's
// min_rtt_multiple already stretches past its target).
const (
	OpeningSkew = 500 * time.Millisecond
	OpeningLag  = 2 * time.Second
)

// Opens says whether validator (an index) may open a round with miner at
// t: it owns a slot j whose opening window [Start(j) − early, Start(j) +
// Slot/8 + late] holds t. A validator starts rounds only in a slot's first
// eighth; early and late allow for clock skew and for the pings and the
// trip that come before its challenge reaches the miner.
func (s Schedule) Opens(miner []byte, validator int, t time.Time, early, late time.Duration) bool {
	if validator < 0 || t.UnixNano() < 0 {
		return false
	}
	first, last := s.SlotAt(t.Add(-s.Slot/8-late)), s.SlotAt(t.Add(early))
	for j := first; j <= last; j++ {
		start := s.Start(j)
		if !t.Before(start.Add(-early)) && !t.After(start.Add(s.Slot/8+late)) && s.Owner(miner, j) == validator {
			return true
		}
	}
	return false
}
