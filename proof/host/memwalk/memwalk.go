// Package memwalk is the RAM host proof, on RandomX's dataset and light-cache
// model: an epoch seed fixes a small light cache, the cache and a miner's ID
// fix that miner's dataset, of any size, whose 64-byte items each cost many
// dependent cache reads and
// multiplies to compute, and a challenge is W parallel timed walks of
// dependent random reads over the dataset of the claimed size. Keyed items
// make one dataset prove memory for one identity.
//
// A miner holding the dataset pays one memory read per step; one holding a
// fraction q recomputes 1 − q of its steps at the item cost and falls
// outside the validator's time bound. Parallel walks measure random-read
// bandwidth. The validator keeps only the cache and recomputes the items of
// sampled segments (SPEC §23).
package memwalk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// Tag names this proof in its checkpoint leaves.
const Tag = "ram"

// StateBytes is the size of a walk state: one little-endian uint64.
const StateBytes = 8

// ItemWords is the number of uint64 words in a dataset item or cache line
// (64 bytes).
const ItemWords = 8

// Bounds on an epoch's cache and item cost.
const (
	MinCacheLog = 4  // 2^4 lines: 1 KiB (tests)
	MaxCacheLog = 24 // 2^24 lines: 1 GiB
	// DefaultCacheLog is 256 MiB (RandomX's cache size): beyond nearly
	// every L3 cache, so each of an item's reads is a DRAM access for a
	// cheater recomputing it.
	DefaultCacheLog = 22
	MinRounds       = 1
	MaxRounds       = 1024
	// DefaultRounds makes an item cost at least 30 DRAM accesses even with
	// the cache resident in L3 (BENCHMARKS.md measures it).
	DefaultRounds = 64
	// MaxItems bounds a dataset: 2^40 items, 64 TiB.
	MaxItems = 1 << 40
)

// StepBoundNs is the per-walk step time beyond which a walk's dataset
// earns less than full credit (host.Timing.Credit): 2.5 DRAM latencies of
// bare metal (100 ns), a small fraction of an item's recomputation. A
// virtual machine's slower dependent reads earn less (SPEC §23.3).
const StepBoundNs = 250

// Odd multipliers of item rounds and walk steps.
const (
	mulItem = 0xBF58476D1CE4E5B9
	mulWalk = 0x94D049BB133111EB
)

// Epoch fixes a light cache and so every dataset item.
type Epoch struct {
	Seed     [32]byte // the epoch seed, unknown to miners before the epoch
	CacheLog uint8    // the cache holds 2^CacheLog lines of 64 bytes
	Rounds   uint32   // dependent cache reads per item
}

// Validate checks the epoch's bounds.
func (e *Epoch) Validate() error {
	if e.CacheLog < MinCacheLog || e.CacheLog > MaxCacheLog {
		return fmt.Errorf("ram cache 2^%d lines: want 2^%d..2^%d", e.CacheLog, MinCacheLog, MaxCacheLog)
	}
	if e.Rounds < MinRounds || e.Rounds > MaxRounds {
		return fmt.Errorf("ram item rounds %d: want %d..%d", e.Rounds, MinRounds, MaxRounds)
	}
	return nil
}

// Cache is an epoch's light cache: what a validator holds.
type Cache struct {
	lines  []uint64 // 8 words per line
	mask   uint64   // lines − 1
	rounds uint32
}

// PeriodSeed is RAM period p's epoch seed (SPEC §23.9): DK("ram period",
// BE64(p)).
func PeriodSeed(p uint64) [32]byte {
	return host.Derive("ram period", binary.BigEndian.AppendUint64(nil, p))
}

// NewCache expands the epoch seed: 64·2^CacheLog bytes of the XOF keyed by
// derive-key("… ram cache", seed), read as little-endian words.
func NewCache(e *Epoch) (*Cache, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	n := 1 << e.CacheLog
	raw := make([]byte, 64*n)
	host.Stream(host.Derive("ram cache", e.Seed[:]), raw)
	c := &Cache{lines: make([]uint64, ItemWords*n), mask: uint64(n - 1), rounds: e.Rounds}
	for i := range c.lines {
		c.lines[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return c, nil
}

// MinerItems is the light cache seen by one miner: its items are keyed by
// the miner's ID, so one dataset proves memory for one identity only (a
// host proving for two holds two datasets, or recomputes one of them).
type MinerItems struct {
	c   *Cache
	key uint64
}

// For returns miner's view of the cache: key = LE64 of the first 8 bytes
// of DK("ram miner", miner).
func (c *Cache) For(miner []byte) MinerItems {
	k := host.Derive("ram miner", miner)
	return MinerItems{c, binary.LittleEndian.Uint64(k[:8])}
}

// Item computes the miner's dataset item i into r:
//
//	r[j] = ((i + j)·mulItem) ⊕ key for j < 8;  p = i
//	repeat Rounds times:
//	  L = cache line p mod lines;  a = r[7]
//	  for j < 8: a = rotl64((a ⊕ L[j])·mulItem, 23) + r[j];  r[j] = a
//	  p = a
//
// Each round's read address depends on the previous round's last
// multiply, and the eight multiplies of a round depend on each other, so an
// item costs Rounds dependent reads plus 8·Rounds dependent multiplies.
func (m MinerItems) Item(i uint64, r *[ItemWords]uint64) {
	for j := range r {
		r[j] = (i+uint64(j))*mulItem ^ m.key
	}
	p := i
	for range m.c.rounds {
		l := m.c.lines[(p&m.c.mask)*ItemWords:][:ItemWords]
		a := r[7]
		for j := range r {
			a = bits.RotateLeft64((a^l[j])*mulItem, 23) + r[j]
			r[j] = a
		}
		p = a
	}
}

// Dataset is items computed once per epoch and held in RAM by the miner.
type Dataset struct {
	words []uint64
	items uint64
}

// Build computes the miner's items 0..items−1 on workers goroutines (<= 0:
// one per CPU).
func Build(c MinerItems, items uint64, workers int) (*Dataset, error) {
	if items < 1 || items > MaxItems {
		return nil, fmt.Errorf("ram dataset of %d items: want 1..%d", items, uint64(MaxItems))
	}
	d := &Dataset{words: make([]uint64, ItemWords*items), items: items}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := uint64(min(uint64(workers), items))
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k * items / w; i < (k+1)*items/w; i++ {
				c.Item(i, (*[ItemWords]uint64)(d.words[i*ItemWords:]))
			}
		}()
	}
	wg.Wait()
	return d, nil
}

// Items is the dataset's item count.
func (d *Dataset) Items() uint64 { return d.items }

// Source yields dataset items: a resident Dataset, or MinerItems
// recomputing them (the validator, or a cheater).
type Source interface {
	Load(i uint64, r *[ItemWords]uint64)
}

// Load copies item i.
func (d *Dataset) Load(i uint64, r *[ItemWords]uint64) {
	copy(r[:], d.words[i*ItemWords:][:ItemWords])
}

// Load computes item i.
func (m MinerItems) Load(i uint64, r *[ItemWords]uint64) { m.Item(i, r) }

// Params is one RAM challenge over the dataset of Items items.
type Params struct {
	Epoch
	Seed       [32]byte // the validator's fresh challenge seed
	Miner      []byte   // the miner's peer ID bytes
	Items      uint64   // claimed dataset size in 64-byte items
	host.Shape          // Chains walks of Steps steps
}

// Validate checks the challenge's bounds.
func (p *Params) Validate() error {
	if err := p.Epoch.Validate(); err != nil {
		return err
	}
	if p.Items < 2 || p.Items > MaxItems {
		return fmt.Errorf("ram dataset of %d items: want 2..%d", p.Items, uint64(MaxItems))
	}
	if len(p.Miner) == 0 || len(p.Miner) > 255 {
		return errors.New("ram challenge: miner ID must be 1..255 bytes")
	}
	return p.Shape.Check()
}

// Encode is the challenge's canonical encoding: epoch seed ‖ u8 CacheLog ‖
// BE32 rounds ‖ seed ‖ u8 len(miner) ‖ miner ‖ BE64 items ‖ BE64 walks ‖
// BE64 steps ‖ BE64 segment.
func (p *Params) Encode() []byte {
	b := append(append([]byte{}, p.Epoch.Seed[:]...), p.CacheLog)
	b = binary.BigEndian.AppendUint32(b, p.Rounds)
	b = append(append(b, p.Seed[:]...), byte(len(p.Miner)))
	b = append(b, p.Miner...)
	for _, v := range []uint64{p.Items, p.Chains, p.Steps, p.Segment} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// DecodeParams parses Encode's output and validates it.
func DecodeParams(b []byte) (*Params, error) {
	d := host.NewDecoder("ram challenge", b)
	p := &Params{}
	d.Array32(&p.Epoch.Seed)
	p.CacheLog = d.U8()
	p.Rounds = d.BE32()
	d.Array32(&p.Seed)
	p.Miner = d.Miner()
	p.Items = d.BE64()
	p.Shape = d.Shape()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return p, p.Validate()
}

// Initial is walk w's start state: the first 8 bytes, little-endian, of
// derive-key("… ram walk", seed ‖ miner ‖ LE64(w)).
func Initial(p *Params, w uint64) uint64 {
	k := host.Derive("ram walk", p.Seed[:], p.Miner, host.LE64(w))
	return binary.LittleEndian.Uint64(k[:])
}

// Walk advances x by n steps over the dataset of items items:
//
//	r = item (x mod items);  for j < 8: x = rotl64((x ⊕ r[j])·mulWalk, 31)
func Walk(src Source, items, x, n uint64) uint64 {
	var r [ItemWords]uint64
	for ; n > 0; n-- {
		src.Load(x%items, &r)
		for _, v := range r {
			x = bits.RotateLeft64((x^v)*mulWalk, 31)
		}
	}
	return x
}

// Lanes is the most walks one prover goroutine interleaves step by step, so
// that their independent reads overlap in the memory system.
const Lanes = 8

// walkLanes advances each of xs by n steps, one step of every walk in turn.
func walkLanes(src Source, items uint64, xs []uint64, n uint64) {
	var r [ItemWords]uint64
	for ; n > 0; n-- {
		for k, x := range xs {
			src.Load(x%items, &r)
			for _, v := range r {
				x = bits.RotateLeft64((x^v)*mulWalk, 31)
			}
			xs[k] = x
		}
	}
}

// Prove runs the walks over src on workers goroutines (<= 0: one per CPU),
// each interleaving up to Lanes walks, spread so that no goroutine holds
// more walks than it must: with no more walks than workers, each walk runs
// alone at its read latency. It returns the checkpoint states in leaf
// order.
func Prove(p *Params, src Source, workers int) ([][]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	states := make([][]byte, p.Leaves())
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	lanes := min(Lanes, (p.Chains+uint64(workers)-1)/uint64(workers))
	groups := (p.Chains + lanes - 1) / lanes
	next := make(chan uint64)
	var wg sync.WaitGroup
	for range min(uint64(workers), groups) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				first := g * lanes
				xs := make([]uint64, min(lanes, p.Chains-first))
				for k := range xs {
					xs[k] = Initial(p, first+uint64(k))
				}
				for j := range p.PerChain() {
					walkLanes(src, p.Items, xs, p.Segment)
					for k, x := range xs {
						states[(first+uint64(k))*p.PerChain()+j] = binary.LittleEndian.AppendUint64(nil, x)
					}
				}
			}
		}()
	}
	for g := range groups {
		next <- g
	}
	close(next)
	wg.Wait()
	return states, nil
}

// ErrSegment is wrapped by the verdict of a segment whose recomputation
// from the light cache differs from its committed checkpoint.
var ErrSegment = errors.New("walk segment recomputes to a different checkpoint")

// Verify checks an opening of the sampled segments against the miner's
// checkpoint root, computing each visited item of p's miner from the light
// cache c of p's epoch: len(segs)·Segment items.
func Verify(p *Params, c *Cache, root commit.CV, segs []uint64, op *host.Opening) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if c.rounds != p.Rounds || c.mask+1 != 1<<p.CacheLog {
		return errors.New("light cache is not of the challenge's epoch parameters")
	}
	got, err := host.CheckOpening(Tag, p.Shape, root, segs, op, StateBytes)
	if err != nil {
		return err
	}
	items := c.For(p.Miner)
	for _, g := range segs {
		w, pos := p.Locate(g)
		x := Initial(p, w)
		if pos > 0 {
			x = binary.LittleEndian.Uint64(got[g-1])
		}
		want := binary.LittleEndian.Uint64(got[g])
		if y := Walk(items, p.Items, x, p.Segment); y != want {
			return fmt.Errorf("%w: segment %d (walk %d, steps %d–%d) gives %#016x, committed %#016x",
				ErrSegment, g, w, pos*p.Segment, (pos+1)*p.Segment-1, y, want)
		}
	}
	return nil
}
