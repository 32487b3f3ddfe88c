package round

import (
	"container/heap"
	"testing"
	"time"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// event queue of a discrete-event simulation of one round.
type simEv struct {
	at    time.Duration
	seq   int
	toV   bool // deliver to the validator, else to the miner
	event any
}

type simQ []simEv

func (q simQ) Len() int { return len(q) }
func (q simQ) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}
func (q simQ) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQ) Push(x any)   { *q = append(*q, x.(simEv)) }
func (q *simQ) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// simulate plays a round of d steps between the two machines: each step
// takes s on the miner, every message takes oneWay. It returns the root
// arrivals the validator recorded.
func simulate(t *testing.T, d int, s, oneWay time.Duration, hold bool) []time.Duration {
	c := proof.Chain{Steps: d, Template: []proof.Params{{Precision: proof.FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("m")}}}
	secret := [32]byte{1}
	v, err := NewValidator(Plan{Chain: c, Secret: secret, Commitment: sample.Commit(secret), Samples: 1,
		FirstRootBy: time.Hour, Deadline: time.Hour, Window: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMiner(c)
	m.Hold = hold
	q := &simQ{}
	seq := 0
	push := func(at time.Duration, toV bool, ev any) {
		seq++
		heap.Push(q, simEv{at, seq, toV, ev})
	}
	var handle func(now time.Duration, acts []any)
	handle = func(now time.Duration, acts []any) {
		for _, a := range acts {
			switch a := a.(type) {
			case Compute:
				push(now+s, false, StepDone{Step: a.Step, Roots: []commit.CV{{byte(a.Step)}}})
			case SendRoot:
				push(now+oneWay, true, Root{Step: a.Step, Roots: a.Roots})
			case SendBeacon:
				push(now+oneWay, false, BeaconIn{Step: a.Step, Beacon: a.Beacon})
			}
		}
	}
	handle(0, v.Step(Start{At: 0}))
	handle(0, m.Begin())
	for q.Len() > 0 {
		e := heap.Pop(q).(simEv)
		if e.toV {
			r := e.event.(Root)
			r.At = e.at
			handle(e.at, v.Step(r))
		} else {
			handle(e.at, m.Step(e.event))
		}
	}
	if len(v.out.Arrivals) != d {
		t.Fatalf("%d of %d roots arrived", len(v.out.Arrivals), d)
	}
	return v.out.Arrivals
}

// TestLatencyCancels: an honest miner whose step outlasts the round trip is
// measured at its true speed whatever the latency (SPEC.md §10).
func TestLatencyCancels(t *testing.T) {
	const d, s, flops = 22, 100 * time.Millisecond, 1e12
	want := flops / s.Seconds() / 1e12
	for _, l := range []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond} {
		got, _ := Throughput(simulate(t, d, s, l, false), flops, 21, 0)
		if got < want*0.9999 || got > want*1.0001 {
			t.Errorf("one-way %v: %.4f TFLOPS, want %.4f", l, got, want)
		}
	}
}

// TestBurstGain: holding roots back gains at most 1/(D−2) (one step), at
// every latency, and nothing once the round trip exceeds a step.
func TestBurstGain(t *testing.T) {
	const s, flops = 100 * time.Millisecond, 1e12
	for _, d := range []int{5, 22, 50} {
		for _, l := range []time.Duration{0, 20 * time.Millisecond, 200 * time.Millisecond} {
			honest, _ := Throughput(simulate(t, d, s, l, false), flops, d-1, 0)
			burst, peak := Throughput(simulate(t, d, s, l, true), flops, d-1, 0)
			bound := float64(d-1) / float64(d-2)
			if burst/honest > bound+1e-9 || peak > burst+1e-9 {
				t.Errorf("D=%d one-way %v: burst %.4f vs honest %.4f: gain %.4f above %.4f", d, l, burst, honest, burst/honest, bound)
			}
			if d >= 22 && burst/honest > 1.05 {
				t.Errorf("D=%d: burst gains %.3f > 5%%", d, burst/honest-1)
			}
		}
	}
}

// TestSharedDeviceGainsNothing: three identities on one device, each round
// sized for T at an estimate off by ½, 1 and 1½. The short round finishes
// while the others wait, and they speed up once it is done, so timed from
// their own roots alone the three sum to 1.2 devices. Counting steps
// 1..D−1 as at least their sized time (min_timed), they sum to one.
func TestSharedDeviceGainsNothing(t *testing.T) {
	const d, T = 22, time.Second
	work := []float64{0.5 / 3, 1.0 / 3, 1.5 / 3} // TFLOP, on a 1-TFLOPS device
	arrivals := shareDevice(work, d)
	var plain, floored float64
	for i, w := range work {
		p, _ := Throughput(arrivals[i], w/d*1e12, d-1, 0)
		f, _ := Throughput(arrivals[i], w/d*1e12, d-1, T*(d-1)/d)
		plain, floored = plain+p, floored+f
	}
	if plain < 1.15 {
		t.Errorf("timed alone the rounds sum to %.3f devices; the test no longer shows the gain", plain)
	}
	if floored > 1.001 {
		t.Errorf("with min_timed the rounds sum to %.3f devices, want at most 1", floored)
	}
}

// shareDevice runs rounds of the given work (TFLOP) from time 0 on one
// 1-TFLOPS device shared equally by the rounds still running, in steps of
// 10 µs, and returns each round's D root arrivals.
func shareDevice(work []float64, d int) [][]time.Duration {
	const dt = 10 * time.Microsecond
	done := make([]float64, len(work))
	out := make([][]time.Duration, len(work))
	for now := dt; ; now += dt {
		var running []int
		for i := range work {
			if len(out[i]) < d {
				running = append(running, i)
			}
		}
		if len(running) == 0 {
			return out
		}
		for _, i := range running {
			done[i] += dt.Seconds() / float64(len(running))
			for len(out[i]) < d && done[i] >= work[i]*float64(len(out[i])+1)/float64(d)-1e-12 {
				out[i] = append(out[i], now)
			}
		}
	}
}
