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

	// Host slots: slot k of the host grid, [k·HostSlot, (k+1)·HostSlot),
	// is a host slot with probability HostShare, owned by a validator
	// drawn by stake from H("pog/host-slot/v1" ‖ k), without the miner.
	// Its owner plays every miner's host set at its start, and no round
	// starts in it: identities that share one host are measured at one
	// instant by one validator. HostShare 0: none.
	HostSlot  time.Duration // the GPU miner's slot
	HostShare float64       // in [0, 1)
}

const (
	scheduleDomain = "pog/schedule/v1"
	hostDomain     = "pog/host-slot/v1"
)

// Validate reports a schedule no slot can be drawn from.
func (s Schedule) Validate() error {
	switch {
	case s.Slot <= 0:
		return errors.New("schedule: slot length must be positive")
	case !(s.Coverage > 0 && s.Coverage <= 1):
		return errors.New("schedule: coverage must be in (0, 1]")
	case len(s.Validators) == 0 || len(s.Validators) != len(s.Stakes):
		return errors.New("schedule: want one stake per validator, at least one")
	case !(s.HostShare >= 0 && s.HostShare < 1):
		return errors.New("schedule: host share must be in [0, 1)")
	case s.HostShare > 0 && s.HostSlot <= 0:
		return errors.New("schedule: host slots need a length")
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

// Owner is the index of slot j's owner for miner, or −1 if it is idle or
// overlaps a host slot. The draw uses integers and one product, so every
// platform agrees: r1 < ⌊Coverage·2⁶⁴⌋ makes the slot owned, and x =
// (r2 >> 11)·2⁻⁵³·ΣStakes picks the first validator whose running stake
// sum exceeds x.
func (s Schedule) Owner(miner []byte, j uint64) int {
	if s.hostOf(j) >= 0 {
		return -1
	}
	r1, r2 := draw(scheduleDomain, miner, j)
	if s.Coverage < 1 && r1 >= uint64(math.Ldexp(s.Coverage, 64)) {
		return -1
	}
	return s.pick(r2)
}

// HostOwner is the index of host-grid slot k's owner, or −1 if it is not a
// host slot: r1 < ⌊HostShare·2⁶⁴⌋, the owner picked from r2 as Owner does.
func (s Schedule) HostOwner(k uint64) int {
	if s.HostShare <= 0 {
		return -1
	}
	r1, r2 := draw(hostDomain, nil, k)
	if r1 >= uint64(math.Ldexp(s.HostShare, 64)) {
		return -1
	}
	return s.pick(r2)
}

// hostOf is the owner of a host slot that slot j overlaps, −1 if none.
func (s Schedule) hostOf(j uint64) int {
	if s.HostShare <= 0 {
		return -1
	}
	start, end := int64(j)*int64(s.Slot), int64(j+1)*int64(s.Slot)
	for k := start / int64(s.HostSlot); k*int64(s.HostSlot) < end; k++ {
		if o := s.HostOwner(uint64(k)); o >= 0 {
			return o
		}
	}
	return -1
}

// draw is the two 64-bit words of H(domain ‖ miner ‖ u64le(j)).
// Hashed from a stack buffer: a Hasher is allocated, and validators draw
// every miner's slots at each tick.
func draw(domain string, miner []byte, j uint64) (r1, r2 uint64) {
	var buf [128]byte
	d := blake3.Sum256(binary.LittleEndian.AppendUint64(append(append(buf[:0], domain...), miner...), j))
	return binary.LittleEndian.Uint64(d[0:8]), binary.LittleEndian.Uint64(d[8:16])
}

// pick is the validator r2 draws by stake.
func (s Schedule) pick(r2 uint64) int {
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

// SlotFor is the slot length of rounds that target target: 5/4 of it.
func SlotFor(target time.Duration) time.Duration { return target + target/4 }

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

// HostStart is when host slot k begins.
func (s Schedule) HostStart(k uint64) time.Time { return time.Unix(0, int64(k)*int64(s.HostSlot)) }

// NextHost is the first host slot at or after host-grid slot from that
// validator self owns, looking at most horizon host slots ahead.
func (s Schedule) NextHost(self int, from uint64, horizon int) (k uint64, ok bool) {
	if self < 0 || s.HostShare <= 0 {
		return 0, false
	}
	for k = from; k < from+uint64(horizon); k++ {
		if s.HostOwner(k) == self {
			return k, true
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

// HostOpens says whether validator may open a host set with any miner at
// t: it owns a host slot k whose opening window [HostStart(k) − early,
// HostStart(k) + HostSlot/8 + late] holds t.
func (s Schedule) HostOpens(validator int, t time.Time, early, late time.Duration) bool {
	if validator < 0 || s.HostShare <= 0 || t.UnixNano() < 0 {
		return false
	}
	first := uint64(max(0, t.Add(-s.HostSlot/8-late).UnixNano()) / int64(s.HostSlot))
	last := uint64(t.Add(early).UnixNano() / int64(s.HostSlot))
	for k := first; k <= last; k++ {
		start := s.HostStart(k)
		if !t.Before(start.Add(-early)) && !t.After(start.Add(s.HostSlot/8+late)) && s.HostOwner(k) == validator {
			return true
		}
	}
	return false
}
