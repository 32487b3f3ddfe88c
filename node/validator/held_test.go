package validator

import (
	"testing"
	"time"
)

// heldByMiner judges a slot by where its window's end falls: in a wait on
// the miner past its excuse, now or in one already over (the latch a tick
// after the window reads), never while the round waits on this validator
// (held zero), never for a miner not busy with a round.
func TestHeldByMiner(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, c := range []struct {
		name                   string
		busy                   bool
		held, lateFrom, lateTo time.Time
		end                    time.Time
		want                   bool
	}{
		{"waiting on this validator", true, time.Time{}, time.Time{}, time.Time{}, at(5), false},
		{"waiting within the excuse", true, at(6), time.Time{}, time.Time{}, at(5), false},
		{"waiting past the excuse", true, at(4), time.Time{}, time.Time{}, at(5), true},
		{"a late wait over before the tick", true, time.Time{}, at(4), at(5.1), at(5), true},
		{"a late wait over before the window ended", true, time.Time{}, at(3), at(4), at(5), false},
		{"a late wait that began after the window ended", true, at(7), at(5.5), at(6), at(5), false},
		{"not busy", false, at(4), at(4), at(6), at(5), false},
	} {
		e := &minerEntry{busy: c.busy, held: hold{c.held, c.lateFrom, c.lateTo}}
		if got := heldByMiner(e, c.end); got != c.want {
			t.Errorf("%s: heldByMiner %v, want %v", c.name, got, c.want)
		}
	}
}

// hostSlotExcused skips a host slot unrecorded only for what this
// validator held the miner with: its host set, running at the window's
// end or over since, or its GPU round's pings or a probe's steps, each
// within its allowance; never for a sized round's steps or anything after
// them, nor for a miner that was free.
func TestHostSlotExcused(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	open, end := at(10), at(10.2)
	for _, c := range []struct {
		name string
		e    minerEntry
		want bool
	}{
		{"free", minerEntry{}, false},
		{"a host set running", minerEntry{hostBusy: true}, true},
		{"a host set within its allowance", minerEntry{hostBusy: true, hostHeld: hold{until: at(11)}}, true},
		{"a host set past its allowance", minerEntry{hostBusy: true, hostHeld: hold{until: at(10.1)}}, false},
		{"a host set over after the window opened", minerEntry{hostEnded: at(10.25)}, true},
		{"a host set over after the window, late at its end", minerEntry{hostEnded: at(10.25), hostHeld: hold{lateFrom: at(10.1), lateTo: at(10.25)}}, false},
		{"a host set over before the window opened", minerEntry{hostEnded: at(9.9)}, false},
		{"pings within their allowance", minerEntry{busy: true, phase: roundPings, held: hold{until: at(11)}}, true},
		{"pings past their allowance", minerEntry{busy: true, phase: roundPings, held: hold{until: at(10.1)}}, false},
		{"a probe's steps within their allowance", minerEntry{busy: true, phase: roundProbe, held: hold{until: at(11)}}, true},
		{"a probe's steps past their allowance", minerEntry{busy: true, phase: roundProbe, held: hold{until: at(10.1)}}, false},
		{"steps within their allowance", minerEntry{busy: true, phase: roundSteps, held: hold{until: at(11)}}, false},
		{"the round's tail", minerEntry{busy: true, phase: roundTail}, false},
	} {
		if got := hostSlotExcused(&c.e, open, end); got != c.want {
			t.Errorf("%s: excused %v, want %v", c.name, got, c.want)
		}
	}
}
