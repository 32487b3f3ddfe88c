// Package cpuwork is the CPU host proof: C independent chains of dependent
// steps over a per-challenge seeded table sized for a core's L2 cache. A
// step reads the table once per each of its 16 lanes, at addresses the
// previous step's 64-bit multiplies chose, and mixes each read in with a
// multiply and a rotate.
//
// A CPU core runs a step in about the time of its 16 L2 reads and
// multiplies; a GPU thread reads from its L2 (the table does not fit its
// shared memory) with an emulated 64-bit multiply, so each chain is several
// times slower there, and the validator fixes the number of chains (SPEC
// §23.2). Checkpoints are committed with package host; the validator
// recomputes sampled segments.
package cpuwork

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// Tag names this proof in its checkpoint leaves.
const Tag = "cpu"

// Lanes is the number of 64-bit words in a chain state. One step reads the
// table once per lane and multiplies once per lane, so a single chain keeps
// a core's multiplier busy: a second chain interleaved on the same core (or
// its SMT sibling) finds little idle capacity to use.
const Lanes = 16

// StateBytes is the size of a chain state: Lanes little-endian uint64s.
const StateBytes = 8 * Lanes

// State is a chain's state.
type State [Lanes]uint64

// Bytes is the state's encoding: its lanes as little-endian uint64s.
func (x *State) Bytes() []byte {
	b := make([]byte, 0, StateBytes)
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

func decodeState(b []byte) (x State) {
	for i := range x {
		x[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return x
}

// Table size bounds: 2^10 words (8 KiB) to 2^20 words (8 MiB).
const (
	MinTableLog = 10
	MaxTableLog = 20
	// DefaultTableLog is 512 KiB: inside every current server core's L2
	// (512 KiB to 2 MiB), beyond a GPU SM's shared memory (≤ 228 KiB).
	DefaultTableLog = 16
)

// StepBoundNs is the per-chain step time beyond which a chain earns less
// than full credit (host.Timing.Credit): about twice a current core's step,
// a third of a GPU's L2 latency (SPEC §23.2).
const StepBoundNs = 100

// mul is the odd multiplier of every step (2^64 / golden ratio).
const mul = 0x9E3779B97F4A7C15

// Params is one CPU challenge.
type Params struct {
	Seed     [32]byte // the validator's fresh challenge seed
	Miner    []byte   // the miner's peer ID bytes: binds the proof to it
	TableLog uint8    // the table holds 2^TableLog uint64 words
	host.Shape
	// WindowMs, if not 0, makes a round run to a window (SPEC §23.2):
	// the miner runs every chain for RunMs, stops them all at the same
	// whole number of segments, at most Steps, and proves those; the
	// round is credited over at least WindowMs, the network's window.
	// 0: every chain runs exactly Steps.
	WindowMs uint32
	// RunMs is how long the miner runs, at most WindowMs: the window less
	// what a distant miner's round trip takes beyond its allowance.
	RunMs uint32
	// ScaleLog makes a step count as 2^ScaleLog: the simulation's scaled
	// CPU (its simulated host takes that many times a step's time), 0 in
	// production.
	ScaleLog uint8
}

// Bounds of a windowed round: a window of a minute, steps scaled 2^20.
const (
	MaxWindowMs = 60_000
	MaxScaleLog = 20
)

// Window is the round's credit window, 0 if it runs a fixed number of
// steps.
func (p *Params) Window() time.Duration { return time.Duration(p.WindowMs) * time.Millisecond }

// Run is how long a windowed round's chains run.
func (p *Params) Run() time.Duration { return time.Duration(p.RunMs) * time.Millisecond }

// Scale is what one step counts as.
func (p *Params) Scale() float64 { return float64(uint64(1) << p.ScaleLog) }

// Proven is p as proven with n steps per chain: the challenge a windowed
// round's samples, checks and records are made over.
func (p *Params) Proven(n uint64) (*Params, error) {
	q := *p
	q.Steps = n
	if n == 0 || n > p.Steps {
		return nil, fmt.Errorf("cpu round proved %d steps a chain: want 1..%d", n, p.Steps)
	}
	return &q, q.Shape.Check()
}

// Validate checks the bounds a verifier relies on.
func (p *Params) Validate() error {
	if p.TableLog < MinTableLog || p.TableLog > MaxTableLog {
		return fmt.Errorf("cpu table 2^%d words: want 2^%d..2^%d", p.TableLog, MinTableLog, MaxTableLog)
	}
	if len(p.Miner) == 0 || len(p.Miner) > 255 {
		return errors.New("cpu challenge: miner ID must be 1..255 bytes")
	}
	switch {
	case p.WindowMs > MaxWindowMs:
		return fmt.Errorf("cpu window of %d ms: at most %d", p.WindowMs, MaxWindowMs)
	case p.RunMs > p.WindowMs || (p.WindowMs > 0 && p.RunMs == 0):
		return fmt.Errorf("cpu round run for %d ms of a %d ms window: want 1..%[2]d", p.RunMs, p.WindowMs)
	case p.ScaleLog > MaxScaleLog:
		return fmt.Errorf("cpu steps scaled 2^%d: at most 2^%d", p.ScaleLog, MaxScaleLog)
	}
	return p.Shape.Check()
}

// Encode is the challenge's canonical encoding, the sample derivation's
// params: seed ‖ u8 len(miner) ‖ miner ‖ u8 TableLog ‖ BE64 chains ‖ BE64
// steps ‖ BE64 segment ‖ BE32 window_ms ‖ BE32 run_ms ‖ u8 scale_log.
func (p *Params) Encode() []byte {
	b := append(append([]byte{}, p.Seed[:]...), byte(len(p.Miner)))
	b = append(append(b, p.Miner...), p.TableLog)
	b = binary.BigEndian.AppendUint64(b, p.Chains)
	b = binary.BigEndian.AppendUint64(b, p.Steps)
	b = binary.BigEndian.AppendUint64(b, p.Segment)
	b = binary.BigEndian.AppendUint32(b, p.WindowMs)
	b = binary.BigEndian.AppendUint32(b, p.RunMs)
	return append(b, p.ScaleLog)
}

// DecodeParams parses Encode's output and validates it.
func DecodeParams(b []byte) (*Params, error) {
	d := host.NewDecoder("cpu challenge", b)
	p := &Params{}
	d.Array32(&p.Seed)
	p.Miner = d.Miner()
	p.TableLog = d.U8()
	p.Shape = d.Shape()
	p.WindowMs, p.RunMs, p.ScaleLog = d.BE32(), d.BE32(), d.U8()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return p, p.Validate()
}

// Table returns the seeded table: 2^TableLog little-endian words of the XOF
// keyed by derive-key("… cpu table", seed ‖ miner).
func Table(p *Params) []uint64 {
	raw := make([]byte, 8<<p.TableLog)
	host.Stream(host.Derive("cpu table", p.Seed[:], p.Miner), raw)
	t := make([]uint64, 1<<p.TableLog)
	for i := range t {
		t[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return t
}

// Initial is chain c's start state: the first StateBytes bytes of the XOF
// keyed by derive-key("… cpu chain", seed ‖ miner ‖ LE64(c)), as
// little-endian words.
func Initial(p *Params, c uint64) State {
	raw := make([]byte, StateBytes)
	host.Stream(host.Derive("cpu chain", p.Seed[:], p.Miner, host.LE64(c)), raw)
	return decodeState(raw)
}

// Run advances x by n steps over table t (len a power of two). One step,
// with all lanes read before any is written:
//
//	v_j = t[x_j mod len(t)]                         for j < Lanes
//	x_j = rotl64((x_j ⊕ v_j)·mul, 29) + v_{(j+1) mod Lanes}
//
// Every read address depends on the previous step's multiplies, and each
// lane takes in its neighbour's read, so a chain runs at the latency of a
// table read plus a multiply per step, never faster.
func Run(t []uint64, x *State, n uint64) {
	mask := uint64(len(t) - 1)
	var v State
	for ; n > 0; n-- {
		for j := range x {
			v[j] = t[x[j]&mask]
		}
		for j := range x {
			x[j] = bits.RotateLeft64((x[j]^v[j])*mul, 29) + v[(j+1)%Lanes]
		}
	}
}

// Prove runs every chain on workers goroutines (<= 0: one per CPU) and
// returns the checkpoint states in leaf order.
func Prove(p *Params, workers int) ([][]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := Table(p)
	states := make([][]byte, p.Leaves())
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan uint64)
	var wg sync.WaitGroup
	for range min(uint64(workers), p.Chains) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				x := Initial(p, c)
				for j := range p.PerChain() {
					Run(t, &x, p.Segment)
					states[c*p.PerChain()+j] = x.Bytes()
				}
			}
		}()
	}
	for c := range p.Chains {
		next <- c
	}
	close(next)
	wg.Wait()
	return states, nil
}

// ProveUntil runs a windowed round (p.WindowMs > 0) on workers goroutines
// (<= 0: one per CPU): every chain advances a segment at a time, in turn
// on its worker, until the first segment a worker ends at or after
// deadline; every chain then completes that many segments (at least two
// checkpoints in all, at most p.Steps ÷ Segment) and stops. It returns the steps per chain n and the
// checkpoint states of p.Proven(n) in leaf order.
func ProveUntil(p *Params, workers int, deadline time.Time) (uint64, [][]byte, error) {
	if err := p.Validate(); err != nil {
		return 0, nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	t := Table(p)
	w := int(min(uint64(workers), p.Chains))
	chains := make([][][]byte, p.Chains) // per chain, its checkpoint states
	least := uint64(1)                   // segments for two checkpoints at least
	if p.Chains == 1 {
		least = 2
	}
	var stop atomic.Uint64 // segments every chain runs; 0: not yet known
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			var mine []uint64 // this worker's chains, one segment each in turn
			for c := uint64(k); c < p.Chains; c += uint64(w) {
				mine = append(mine, c)
			}
			xs := make([]State, len(mine))
			for i, c := range mine {
				xs[i] = Initial(p, c)
			}
			for j := uint64(1); j <= p.PerChain(); j++ {
				if s := stop.Load(); s != 0 && j > s {
					return
				}
				for i, c := range mine {
					Run(t, &xs[i], p.Segment)
					chains[c] = append(chains[c], xs[i].Bytes())
				}
				if !time.Now().Before(deadline) {
					stop.CompareAndSwap(0, max(j, least))
				}
			}
		})
	}
	wg.Wait()
	segs := stop.Load()
	if segs == 0 {
		segs = p.PerChain() // the cap came before the window's end
	}
	states := make([][]byte, 0, p.Chains*segs)
	for _, cs := range chains {
		states = append(states, cs[:segs]...)
	}
	return segs * p.Segment, states, nil
}

// ErrSegment is wrapped by the verdict of a segment whose recomputation
// differs from its committed checkpoint.
var ErrSegment = errors.New("segment recomputes to a different checkpoint")

// Verify checks an opening of the sampled segments against the miner's
// checkpoint root by recomputing each segment: len(segs)·Segment steps plus
// the table, against the prover's Chains·Steps.
func Verify(p *Params, root commit.CV, segs []uint64, op *host.Opening) error {
	if err := p.Validate(); err != nil {
		return err
	}
	got, err := host.CheckOpening(Tag, p.Shape, root, segs, op, StateBytes)
	if err != nil {
		return err
	}
	t := Table(p)
	for _, g := range segs {
		c, pos := p.Locate(g)
		x := Initial(p, c)
		if pos > 0 {
			x = decodeState(got[g-1])
		}
		if Run(t, &x, p.Segment); x != decodeState(got[g]) {
			return fmt.Errorf("%w: segment %d (chain %d, steps %d–%d)",
				ErrSegment, g, c, pos*p.Segment, (pos+1)*p.Segment-1)
		}
	}
	return nil
}
