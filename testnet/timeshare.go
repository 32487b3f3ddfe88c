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
//
// A miner's own device is not booked (newOwnDevice): each of its jobs is
// paced on its own. Two validators' chained rounds can overlap at one
// miner; on 2 shared cores the testnet cannot model that sharing without
// flagging honest miners, so it measures each round at the profile's rate
// (the overlap's dilution is an open protocol question, BENCHMARKS §6b).
type simDevice struct {
	tflops float64
	booked bool // shared by identities: jobs queue one after another

	mu   sync.Mutex
	free time.Time // when the last booked job finishes
}

func newSimDevice(tflops float64) *simDevice { return &simDevice{tflops: tflops, booked: true} }

func newOwnDevice(tflops float64) *simDevice { return &simDevice{tflops: tflops} }

// reserve books a job of flops started at start and says when it
// finishes: after the jobs booked before it, at the device's rate.
func (d *simDevice) reserve(start time.Time, flops float64) time.Time {
	run := time.Duration(flops / (d.tflops * 1e12) * float64(time.Second))
	if !d.booked {
		return start.Add(run)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	begin := start
	if d.free.After(begin) {
		begin = d.free
	}
	d.free = begin.Add(run)
	return d.free
}

// timeshareIdentities is how many identities the timeshare adversary runs
// on its one device.
const timeshareIdentities = 3
