package adversary

import (
	"testing"
	"time"
)

// TestSimDeviceQueues books jobs on one device: concurrent jobs finish one
// job-time after another, a job after an idle gap starts when it arrives.
func TestSimDeviceQueues(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := NewSharedDevice(1e-6) // 1 MFLOP/s: 1e5 FLOPs take 100 ms
	for _, c := range []struct {
		start time.Duration // after t0
		flops float64
		want  time.Duration // finish, after t0
	}{
		{0, 1e5, 100 * time.Millisecond},                      // idle device: full speed
		{0, 1e5, 200 * time.Millisecond},                      // same instant: waits for the first
		{50 * time.Millisecond, 2e5, 400 * time.Millisecond},  // still queued behind both
		{time.Second, 1e5, 1100 * time.Millisecond},           // idle again
		{1050 * time.Millisecond, 0, 1100 * time.Millisecond}, // an empty job still waits its turn
	} {
		if got := d.reserve(t0.Add(c.start), c.flops, "").Sub(t0); got != c.want {
			t.Errorf("job at +%v of %g FLOPs finishes at +%v, want +%v", c.start, c.flops, got, c.want)
		}
	}
	// Separate devices do not slow each other down.
	a, b := NewSharedDevice(1e-6), NewSharedDevice(1e-6)
	a.reserve(t0, 1e5, "")
	if got := b.reserve(t0, 1e5, "").Sub(t0); got != 100*time.Millisecond {
		t.Errorf("an identity's own device was slowed by another's job: finishes at +%v", got)
	}
}
