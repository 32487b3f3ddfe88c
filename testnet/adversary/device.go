package adversary

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Device is one simulated GPU's time. Jobs hold it one after another,
// in the order they start, each for FLOPs ÷ the device's rate, whichever
// identity submitted them: the timeshare adversary's identities share one,
// so their concurrent jobs queue as they would on a real GPU (serialised,
// first come first served: the order that favours the first job most).
//
// A miner's own device is not booked (NewOwnDevice): each of its jobs is
// paced on its own. Two validators' chained rounds can overlap at one
// miner; on 2 shared cores the testnet cannot model that sharing without
// flagging honest miners, so it measures each round at the profile's rate
// (the overlap's dilution is an open protocol question, BENCHMARKS §6b).
//
// Between dependent steps a device is idle while its host derives the
// next step: tens of microseconds on a real one, but on the testnet's 2
// shared cores the simulator's own timer wake-ups and goroutine hand-offs
// took about 0.7 ms a step on a small network and more on the full one,
// which cost 45 ms steps 1.6–3 % and a distant miner's 500 ms steps a
// tenth of that (BENCHMARKS.md "Distance and host rounds"). A job begun
// within simCarry of the last one's end, with none running, starts where
// that one ended, so the simulator's latency is not the device's.
type Device struct {
	tflops float64
	booked bool          // shared by identities: jobs queue one after another
	carry  time.Duration // simCarry in real time; 0 in virtual time
	// ordered books the jobs requested in one instant in key order (in
	// virtual time, where goroutine order would otherwise decide).
	ordered bool
	pending []*booking
	Load    *Load // a CPU job sharing the device (loaded); nil: none

	mu      sync.Mutex
	free    time.Time // when the last booked job finishes
	active  int       // jobs begun and not ended
	lastEnd time.Time // when the last job to end was due
}

// simCarry is the longest gap between jobs taken for the simulator's own
// latency rather than the device's idle time: a beacon wait on loopback
// is longer, and a far miner's steps outlast its round trip.
const simCarry = 5 * time.Millisecond

// begin starts a job at now, or at the last job's end (simCarry).
func (d *Device) begin(now time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active++
	if d.active == 1 && !d.lastEnd.IsZero() && !now.Before(d.lastEnd) && now.Sub(d.lastEnd) < d.carry {
		return d.lastEnd
	}
	return now
}

// end ends a begun job that was due at due (zero: it never paced).
func (d *Device) end(due time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active--
	if due.After(d.lastEnd) {
		d.lastEnd = due
	}
}

// NewSharedDevice is a device of tflops that identities share: their jobs
// queue one after another.
func NewSharedDevice(tflops float64) *Device {
	return &Device{tflops: tflops, booked: true, carry: simCarry}
}

// NewOwnDevice is one identity's device of tflops: each job is paced on
// its own.
func NewOwnDevice(tflops float64) *Device { return &Device{tflops: tflops, carry: simCarry} }

// InVirtualTime makes d a device of a simulated run, where the simulator
// takes no time between jobs and no gap is carried over.
func (d *Device) InVirtualTime(sim bool) *Device {
	if sim {
		d.carry, d.ordered = 0, d.booked
	}
	return d
}

// Hold books a job of flops started now, key ordering it within the
// instant, and waits until it ends or ctx is done.
func (d *Device) Hold(ctx context.Context, flops float64, key string) {
	t := time.NewTimer(time.Until(d.reserve(time.Now(), flops, key)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// booking is a job waiting for the instant it was requested in to end.
type booking struct {
	start time.Time
	run   time.Duration
	key   string
	due   time.Time
}

// reserve books a job of flops started at start and says when it
// finishes: after the jobs booked before it, at the device's rate. key
// orders the jobs an ordered device is asked for in one instant.
func (d *Device) reserve(start time.Time, flops float64, key string) time.Time {
	run := time.Duration(flops / (d.tflops * 1e12) * float64(time.Second) * d.Load.factor(start))
	if !d.booked {
		return start.Add(run)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ordered {
		return d.book(start, run)
	}
	b := &booking{start: start, run: run, key: key}
	d.pending = append(d.pending, b)
	// Virtual time moves on only once every goroutine waits: after this
	// nanosecond every request of the instant is pending.
	d.mu.Unlock()
	time.Sleep(time.Nanosecond)
	d.mu.Lock()
	slices.SortFunc(d.pending, func(x, y *booking) int {
		return cmp.Or(x.start.Compare(y.start), strings.Compare(x.key, y.key))
	})
	for _, p := range d.pending {
		p.due = d.book(p.start, p.run)
	}
	d.pending = nil
	return b.due
}

// book schedules a job of length run started at start after the booked ones.
func (d *Device) book(start time.Time, run time.Duration) time.Time {
	begin := start
	if d.free.After(begin) {
		begin = d.free
	}
	d.free = begin.Add(run)
	return d.free
}

// TimeshareIdentities is how many identities the timeshare adversary runs
// on its one device.
const TimeshareIdentities = 3
