package netlab

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Faults are injected into a run in virtual time (testnet.Config.Sim): into the
// simulated network (sim.go), a node's life and a node's store. Times
// count from the run's start. The zero value injects nothing.
type Faults struct {
	Partition *Partition
	Loss      float64 // probability that any packet is dropped
	Spike     *Spike
	Crash     *Crash
	Store     *StoreFault
}

// Partition drops every packet between a node of A and a node of B from
// From to To, then heals.
type Partition struct {
	A, B     []string
	From, To time.Duration
}

func (p *Partition) Splits(a, b string) bool {
	inA := func(n string) bool { return slices.Contains(p.A, n) }
	inB := func(n string) bool { return slices.Contains(p.B, n) }
	return inA(a) && inB(b) || inB(a) && inA(b)
}

// Spike adds Extra one-way latency to every packet to or from Node from
// From to To.
type Spike struct {
	Node     string
	Extra    time.Duration
	From, To time.Duration
}

// Crash stops Node at At (as at the run's end) and restarts it
// at Restart from its home, key and store, on a new address.
type Crash struct {
	Node        string
	At, Restart time.Duration
}

// StoreFault fails every write to Node's write-ahead log from At: the
// store fails, and the node must stop with node.ErrStoreFailed. Only WAL
// writes: they fail under the store call that made them, where the store
// turns Pebble's fatal error into an error; a failed MANIFEST write in a
// background flush would park its goroutine for good, which a synctest
// bubble reports as a deadlock.
type StoreFault struct {
	Node string
	At   time.Duration
}

// Any says whether f injects anything.
func (f Faults) Any() bool {
	return f.Partition != nil || f.Loss > 0 || f.Spike != nil || f.Crash != nil || f.Store != nil
}

// String names the faults, for the console and the explorer.
func (f Faults) String() string {
	var out []string
	if p := f.Partition; p != nil {
		out = append(out, fmt.Sprintf("partition %v | %v from %v to %v", p.A, p.B, p.From, p.To))
	}
	if f.Loss > 0 {
		out = append(out, fmt.Sprintf("loss %.1f%%", 100*f.Loss))
	}
	if s := f.Spike; s != nil {
		out = append(out, fmt.Sprintf("latency +%v on %s from %v to %v", s.Extra, s.Node, s.From, s.To))
	}
	if c := f.Crash; c != nil {
		out = append(out, fmt.Sprintf("crash %s at %v, restart at %v", c.Node, c.At, c.Restart))
	}
	if s := f.Store; s != nil {
		out = append(out, fmt.Sprintf("store writes fail on %s from %v", s.Node, s.At))
	}
	if len(out) == 0 {
		return "no faults"
	}
	return strings.Join(out, "; ")
}
