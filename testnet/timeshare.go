package testnet

import (
	"sync"
	"time"
)

// simDevice is one simulated GPU's time. Jobs hold it one after another,
// in the order they start, each for FLOPs ÷ the device's rate, whichever
// identity submitted them: the timeshare adversary's identities share one,
// so their concurrent jobs queue as they would on a real GPU (serialised,
// first come first served: the order that favours the first job most).
type simDevice struct {
	tflops float64

	mu   sync.Mutex
	free time.Time // when the last booked job finishes
}

func newSimDevice(tflops float64) *simDevice { return &simDevice{tflops: tflops} }

// reserve books a job of flops started at start and says when it
// finishes: after the jobs booked before it, at the device's rate.
func (d *simDevice) reserve(start time.Time, flops float64) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	begin := start
	if d.free.After(begin) {
		begin = d.free
	}
	d.free = begin.Add(time.Duration(flops / (d.tflops * 1e12) * float64(time.Second)))
	return d.free
}

// timeshareIdentities is how many identities the timeshare adversary runs
// on its one device.
const timeshareIdentities = 3
