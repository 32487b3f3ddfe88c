package plot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// Tag names this proof in its checkpoint leaves.
const Tag = "plot"

// StateBytes is the size of a walk state.
const StateBytes = 32

// Bounds on what one audit opening carries.
const (
	MaxOpenBlocks = commit.MaxIndices
	MaxOpenBytes  = 64 << 20
)

// Reader reads block b of a plot into dst.
type Reader interface {
	ReadBlock(b uint64, dst []byte) error
}

// Audit is one storage challenge: walks over the plot with the announced
// root.
type Audit struct {
	Plot
	Root       commit.CV // the plot root the miner announced
	Seed       [32]byte  // the validator's fresh challenge seed
	host.Shape           // Chains walks of Steps steps
}

// Validate checks the audit's bounds, including that one opened segment
// fits an opening.
func (a *Audit) Validate() error {
	if err := a.Plot.Validate(); err != nil {
		return err
	}
	if err := a.Shape.Check(); err != nil {
		return err
	}
	if a.Segment > MaxOpenBlocks || a.Segment<<a.BlockLog > MaxOpenBytes {
		return fmt.Errorf("plot audit segment of %d blocks: an opened segment must fit %d blocks and %d bytes", a.Segment, MaxOpenBlocks, MaxOpenBytes)
	}
	return nil
}

// MaxSample is the most segments a sample of this audit may open: as many
// as fit MaxOpenBlocks blocks and MaxOpenBytes bytes, at most
// host.MaxSegments.
func (a *Audit) MaxSample() int {
	return int(min(host.MaxSegments, MaxOpenBlocks/a.Segment, MaxOpenBytes/(a.Segment<<a.BlockLog)))
}

// Sample derives the audit's sample of k segments (host.Sample), at most
// MaxSample of them.
func Sample(secret [32]byte, root commit.CV, a *Audit, k int) []uint64 {
	return host.Sample(secret, root, a.Encode(), a.Shape, min(k, a.MaxSample()))
}

// Encode is the audit's canonical encoding: the plot's ‖ root ‖ seed ‖ BE64
// walks ‖ BE64 steps ‖ BE64 segment.
func (a *Audit) Encode() []byte {
	b := append(append(a.Plot.Encode(), a.Root[:]...), a.Seed[:]...)
	for _, v := range []uint64{a.Chains, a.Steps, a.Segment} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// DecodeAudit parses Encode's output and validates it.
func DecodeAudit(b []byte) (*Audit, error) {
	d := host.NewDecoder("plot audit", b)
	a := &Audit{Plot: decodePlot(d)}
	d.Array32((*[32]byte)(&a.Root))
	d.Array32(&a.Seed)
	a.Shape = d.Shape()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return a, a.Validate()
}

// DecodePlot parses Plot.Encode's output and validates it.
func DecodePlot(b []byte) (*Plot, error) {
	d := host.NewDecoder("plot", b)
	p := decodePlot(d)
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return &p, p.Validate()
}

func decodePlot(d *host.Decoder) Plot {
	p := Plot{Miner: d.Miner(), BlockLog: d.U8()}
	p.Rounds = d.BE32()
	p.Blocks = d.BE64()
	return p
}

// Initial is walk w's start state: derive-key("… plot walk", seed ‖ u8
// len(miner) ‖ miner ‖ LE64(w)).
func Initial(a *Audit, w uint64) [32]byte {
	return host.Derive("plot walk", a.Seed[:], []byte{byte(len(a.Miner))}, a.Miner, host.LE64(w))
}

// next is the block a walk in state s reads: LE64(s[0:8]) mod blocks.
func next(s [32]byte, blocks uint64) uint64 { return binary.LittleEndian.Uint64(s[:]) % blocks }

// step is the state after reading block b: derive-key("… plot step", s ‖
// LE64(b) ‖ block).
func step(s [32]byte, b uint64, block []byte) [32]byte {
	return host.Derive("plot step", s[:], host.LE64(b), block)
}

// Prove runs the audit's walks over the plot r on workers goroutines (<= 0:
// one per walk, for an SSD's queue depth) and returns the checkpoint states.
func Prove(a *Audit, r Reader, workers int) ([][]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	states := make([][]byte, a.Leaves())
	if workers <= 0 {
		workers = int(min(a.Chains, 256))
	}
	next := make(chan uint64)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range min(uint64(workers), a.Chains) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, a.BlockBytes())
			for w := range next {
				s := Initial(a, w)
				for j := range a.PerChain() {
					var err error
					if s, err = walk(a, r, s, a.Segment, buf, nil); err != nil {
						errs <- err
						return
					}
					states[w*a.PerChain()+j] = append([]byte(nil), s[:]...)
				}
			}
		}()
	}
	var err error
feed:
	for w := range a.Chains {
		select {
		case next <- w:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	if err != nil {
		return nil, err
	}
	return states, nil
}

// walk advances s by n steps, reading blocks from r into buf; seen, if not
// nil, collects the blocks read.
func walk(a *Audit, r Reader, s [32]byte, n uint64, buf []byte, seen map[uint64]bool) ([32]byte, error) {
	for ; n > 0; n-- {
		b := next(s, a.Blocks)
		if err := r.ReadBlock(b, buf); err != nil {
			return s, fmt.Errorf("reading plot block %d: %w", b, err)
		}
		if seen != nil {
			seen[b] = true
		}
		s = step(s, b, buf)
	}
	return s, nil
}

// Opening answers a storage audit's sample: the checkpoints, the blocks the
// sampled segments read (distinct, ascending) and their inclusion proof
// against the plot root.
type Opening struct {
	Checkpoints host.Opening
	Indices     []uint64
	Blocks      [][]byte
	Proof       commit.Proof
}

// Open answers a sample from the committed walk states and leaves, reading
// the blocks again from r; plotLeaves are the plot's block leaves, kept
// since the plot was built.
func Open(a *Audit, r Reader, plotLeaves []commit.CV, states [][]byte, leaves []commit.CV, segs []uint64) (*Opening, error) {
	cp, err := host.Open(a.Shape, states, leaves, segs)
	if err != nil {
		return nil, err
	}
	seen := map[uint64]bool{}
	buf := make([]byte, a.BlockBytes())
	for _, g := range segs {
		s := Initial(a, g/a.PerChain())
		if g%a.PerChain() > 0 {
			s = [32]byte(states[g-1])
		}
		if _, err := walk(a, r, s, a.Segment, buf, seen); err != nil {
			return nil, err
		}
	}
	op := &Opening{Checkpoints: *cp}
	for b := range seen {
		op.Indices = append(op.Indices, b)
	}
	slices.Sort(op.Indices)
	for _, b := range op.Indices {
		blk := make([]byte, a.BlockBytes())
		if err := r.ReadBlock(b, blk); err != nil {
			return nil, fmt.Errorf("reading plot block %d: %w", b, err)
		}
		op.Blocks = append(op.Blocks, blk)
	}
	if op.Proof, err = commit.Prove(plotLeaves, op.Indices); err != nil {
		return nil, err
	}
	return op, nil
}

// Verdicts of a storage audit, wrapped with detail.
var (
	ErrMissingBlock = errors.New("a sampled step reads a block the opening lacks")
	ErrExtraBlock   = errors.New("the opening carries a block no sampled step reads")
	ErrBlockProof   = errors.New("opened blocks are not in the announced plot")
	ErrSegment      = errors.New("walk segment recomputes to a different checkpoint")
)

// Verify checks an audit opening against the miner's checkpoint root and
// the announced plot root: checkpoint inclusion, block inclusion, then each
// sampled segment recomputed from the opened blocks (hashing only; no block
// is regenerated).
func Verify(a *Audit, root commit.CV, segs []uint64, op *Opening) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if len(segs) > a.MaxSample() {
		return fmt.Errorf("%d sampled segments: an audit with %d-block segments opens at most %d", len(segs), a.Segment, a.MaxSample())
	}
	got, err := host.CheckOpening(Tag, a.Shape, root, segs, &op.Checkpoints, StateBytes)
	if err != nil {
		return err
	}
	blocks, err := checkBlocks(a, op)
	if err != nil {
		return err
	}
	used := map[uint64]bool{}
	for _, g := range segs {
		w, pos := a.Locate(g)
		s := Initial(a, w)
		if pos > 0 {
			s = [32]byte(got[g-1])
		}
		for k := range a.Segment {
			b := next(s, a.Blocks)
			blk, ok := blocks[b]
			if !ok {
				return fmt.Errorf("%w: block %d at step %d of walk %d", ErrMissingBlock, b, pos*a.Segment+k, w)
			}
			used[b] = true
			s = step(s, b, blk)
		}
		if [32]byte(got[g]) != s {
			return fmt.Errorf("%w: segment %d (walk %d, steps %d–%d)", ErrSegment, g, w, pos*a.Segment, (pos+1)*a.Segment-1)
		}
	}
	if len(used) != len(blocks) {
		return fmt.Errorf("%w: %d opened, %d read", ErrExtraBlock, len(blocks), len(used))
	}
	return nil
}

// checkBlocks verifies the opened blocks' inclusion under the plot root and
// returns them by index.
func checkBlocks(a *Audit, op *Opening) (map[uint64][]byte, error) {
	if len(op.Blocks) != len(op.Indices) {
		return nil, fmt.Errorf("%w: %d blocks for %d indices", ErrBlockProof, len(op.Blocks), len(op.Indices))
	}
	leaves := make([]commit.CV, len(op.Blocks))
	out := make(map[uint64][]byte, len(op.Blocks))
	for k, blk := range op.Blocks {
		if len(blk) != a.BlockBytes() {
			return nil, fmt.Errorf("%w: block %d is %d bytes, want %d", ErrBlockProof, op.Indices[k], len(blk), a.BlockBytes())
		}
		leaves[k] = a.Leaf(op.Indices[k], blk)
		out[op.Indices[k]] = blk
	}
	if len(op.Indices) == 0 {
		return out, nil
	}
	if err := commit.Verify(a.Root, a.Blocks, op.Indices, leaves, op.Proof); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBlockProof, err)
	}
	return out, nil
}

// ErrNotRegenerated is wrapped by the verdict of an announced plot whose
// sampled block is not the miner's seeded block.
var ErrNotRegenerated = errors.New("plot block differs from its regeneration for this miner")

// CheckPlot is the announce-time check: the sampled blocks, with their
// inclusion proof under root, must equal their regeneration for p's miner.
// It costs one regeneration per sampled block.
func CheckPlot(p *Plot, root commit.CV, indices []uint64, blocks [][]byte, proof commit.Proof) error {
	if err := p.Validate(); err != nil {
		return err
	}
	a := &Audit{Plot: *p, Root: root}
	if _, err := checkBlocks(a, &Opening{Indices: indices, Blocks: blocks, Proof: proof}); err != nil {
		return err
	}
	want := make([]byte, p.BlockBytes())
	for k, b := range indices {
		p.Generate(b, want)
		if string(want) != string(blocks[k]) {
			return fmt.Errorf("%w %x: block %d", ErrNotRegenerated, p.Miner, b)
		}
	}
	return nil
}

// Build generates the plot's blocks on workers goroutines (<= 0: one per
// CPU), hands each to write in index order, and returns the plot's leaves
// and root (the BLAKE3 hash of the concatenated blocks).
func Build(p *Plot, workers int, write func(b uint64, block []byte) error) ([]commit.CV, commit.CV, error) {
	if err := p.Validate(); err != nil {
		return nil, commit.CV{}, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	leaves := make([]commit.CV, p.Blocks)
	batch := uint64(workers) * 4
	bufs := make([][]byte, batch)
	for i := range bufs {
		bufs[i] = make([]byte, p.BlockBytes())
	}
	for lo := uint64(0); lo < p.Blocks; lo += batch {
		hi := min(lo+batch, p.Blocks)
		var wg sync.WaitGroup
		for k := range min(uint64(workers), hi-lo) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := lo + k; b < hi; b += uint64(workers) {
					p.Generate(b, bufs[b-lo])
					leaves[b] = p.Leaf(b, bufs[b-lo])
				}
			}()
		}
		wg.Wait()
		for b := lo; b < hi; b++ {
			if err := write(b, bufs[b-lo]); err != nil {
				return nil, commit.CV{}, fmt.Errorf("writing plot block %d: %w", b, err)
			}
		}
	}
	root, err := commit.Root(leaves)
	return leaves, root, err
}

// CheckRegenerated regenerates the first block each of the first r sampled
// segments reads (segs and op as Verify accepted them) and fails if one is
// not the miner's seeded block: an audit over another identity's plot, or a
// plot of cheaper blocks. The sample is drawn after the checkpoint root, so
// which blocks are regenerated is unknown to the miner when it commits; it
// costs r regenerations.
func CheckRegenerated(a *Audit, segs []uint64, op *Opening, r int) error {
	got := make(map[uint64][]byte, len(op.Checkpoints.States))
	needed := a.Needed(segs)
	if len(needed) != len(op.Checkpoints.States) {
		return fmt.Errorf("%w: %d states for %d checkpoints", host.ErrCheckpoint, len(op.Checkpoints.States), len(needed))
	}
	for k, g := range needed {
		got[g] = op.Checkpoints.States[k]
	}
	want := make([]byte, a.BlockBytes())
	for _, g := range segs[:min(r, len(segs))] {
		w, pos := a.Locate(g)
		s := Initial(a, w)
		if pos > 0 {
			s = [32]byte(got[g-1])
		}
		b := next(s, a.Blocks)
		k, ok := slices.BinarySearch(op.Indices, b)
		if !ok {
			return fmt.Errorf("%w: block %d", ErrMissingBlock, b)
		}
		a.Generate(b, want)
		if string(want) != string(op.Blocks[k]) {
			return fmt.Errorf("%w %x: block %d", ErrNotRegenerated, a.Miner, b)
		}
	}
	return nil
}
