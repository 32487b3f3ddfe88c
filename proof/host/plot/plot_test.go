package plot

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"lukechampine.com/blake3"
)

func tiny(miner string) *Plot {
	return &Plot{Miner: []byte(miner), BlockLog: MinBlockLog, Rounds: 2, Blocks: 40}
}

// mem is a plot held in memory.
type mem [][]byte

func (m mem) ReadBlock(b uint64, dst []byte) error {
	if b >= uint64(len(m)) || m[b] == nil {
		return errors.New("no such block")
	}
	copy(dst, m[b])
	return nil
}

func build(t *testing.T, p *Plot) (mem, []commit.CV, commit.CV) {
	t.Helper()
	m := make(mem, p.Blocks)
	leaves, root, err := Build(p, 3, func(b uint64, blk []byte) error {
		m[b] = append([]byte(nil), blk...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, leaves, root
}

func audit(p *Plot, root commit.CV) *Audit {
	a := &Audit{Plot: *p, Root: root, Shape: host.Shape{Chains: 2, Steps: 24, Segment: 4}}
	a.Seed[0] = 11
	return a
}

func TestRootIsTheFileHash(t *testing.T) {
	p := tiny("miner A")
	m, _, root := build(t, p)
	var all []byte
	for _, b := range m {
		all = append(all, b...)
	}
	if commit.CV(blake3.Sum256(all)) != root {
		t.Fatal("plot root is not BLAKE3 of the plot file")
	}
}

func TestFileRoundTrip(t *testing.T) {
	p := tiny("miner A")
	dir := t.TempDir()
	path := filepath.Join(dir, "plot")
	f, _, root, err := Create(path, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, _, err := Create(path, p, 2); err == nil {
		t.Fatal("Create overwrote an existing plot")
	}
	m, _, want := build(t, p)
	if root != want {
		t.Fatal("file and memory builds differ")
	}
	g, err := OpenFile(path, p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	buf := make([]byte, p.BlockBytes())
	if err := g.ReadBlock(7, buf); err != nil || string(buf) != string(m[7]) {
		t.Fatalf("block 7 read back wrong (%v)", err)
	}
	if g.ReadBlock(p.Blocks, buf) == nil {
		t.Fatal("read past the plot")
	}
	q := *p
	q.Blocks++
	if _, err := OpenFile(path, &q); err == nil || !strings.Contains(err.Error(), "bytes, want") {
		t.Fatalf("size mismatch not caught: %v", err)
	}
	// A plot of another construction (here: another layer count, which
	// changes every block as the domain string's version does) is refused.
	q = *p
	q.Rounds++
	if _, err := OpenFile(path, &q); !errors.Is(err, ErrStalePlot) || !strings.Contains(err.Error(), "to rebuild") {
		t.Fatalf("a stale plot file opened: %v", err)
	}
}

func proveAll(t *testing.T, a *Audit, r Reader, plotLeaves []commit.CV) (commit.CV, []uint64, *Opening) {
	t.Helper()
	states, err := Prove(a, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	root, leaves, err := host.Commit(Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	segs := Sample([32]byte{4}, root, a, int(a.Leaves()))
	op, err := Open(a, r, plotLeaves, states, leaves, segs)
	if err != nil {
		t.Fatal(err)
	}
	return root, segs, op
}

func TestHonestAuditVerifies(t *testing.T) {
	p := tiny("miner A")
	m, leaves, root := build(t, p)
	a := audit(p, root)
	cr, segs, op := proveAll(t, a, m, leaves)
	if err := Verify(a, cr, segs, op); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlot(p, root, op.Indices[:3], op.Blocks[:3], mustProve(t, leaves, op.Indices[:3])); err != nil {
		t.Fatal(err)
	}
}

func mustProve(t *testing.T, leaves []commit.CV, idx []uint64) commit.Proof {
	t.Helper()
	pr, err := commit.Prove(leaves, idx)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func TestBadAudits(t *testing.T) {
	p := tiny("miner A")
	m, leaves, root := build(t, p)
	a := audit(p, root)
	cr, segs, honest := proveAll(t, a, m, leaves)
	clone := func() *Opening {
		op := *honest
		op.Indices = append([]uint64(nil), honest.Indices...)
		op.Blocks = append([][]byte(nil), honest.Blocks...)
		return &op
	}
	cases := []struct {
		name   string
		edit   func(*Opening)
		reason error
	}{
		{"missing block", func(op *Opening) {
			op.Indices, op.Blocks = op.Indices[1:], op.Blocks[1:]
			op.Proof = mustProve(t, leaves, op.Indices)
		}, ErrMissingBlock},
		{"wrong block content", func(op *Opening) {
			op.Blocks[0] = append([]byte{op.Blocks[0][0] ^ 1}, op.Blocks[0][1:]...)
		}, ErrBlockProof},
		{"extra block", func(op *Opening) {
			for b := uint64(0); ; b++ {
				if !containsIdx(op.Indices, b) {
					op.Indices = insert(op.Indices, b)
					break
				}
			}
			op.Blocks = nil
			for _, b := range op.Indices {
				op.Blocks = append(op.Blocks, m[b])
			}
			op.Proof = mustProve(t, leaves, op.Indices)
		}, ErrExtraBlock},
		{"wrong checkpoint", func(op *Opening) {
			op.Checkpoints.States = append([][]byte(nil), op.Checkpoints.States...)
			op.Checkpoints.States[0] = make([]byte, StateBytes)
		}, host.ErrCheckpoint},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := clone()
			c.edit(op)
			if err := Verify(a, cr, segs, op); !errors.Is(err, c.reason) {
				t.Fatalf("verdict %v, want %v", err, c.reason)
			}
		})
	}
}

func containsIdx(s []uint64, x uint64) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func insert(s []uint64, x uint64) []uint64 {
	out := []uint64{}
	done := false
	for _, v := range s {
		if !done && x < v {
			out, done = append(out, x), true
		}
		out = append(out, v)
	}
	if !done {
		out = append(out, x)
	}
	return out
}

func TestWalkOverAnotherPlotFails(t *testing.T) {
	p := tiny("miner A")
	_, _, root := build(t, p)
	// Miner B answers A's audit from B's own plot.
	q := tiny("miner B")
	mb, leavesB, _ := build(t, q)
	a := audit(p, root)
	cr, segs, op := proveAll(t, a, mb, leavesB)
	if err := Verify(a, cr, segs, op); !errors.Is(err, ErrBlockProof) {
		t.Fatalf("verdict %v, want %v", err, ErrBlockProof)
	}
}

func TestCheckPlotCatchesAnotherIdentityOrCheapBlocks(t *testing.T) {
	p := tiny("miner A")
	// Miner A announces the root of miner B's plot, which it has copied.
	q := tiny("miner B")
	mb, leavesB, rootB := build(t, q)
	idx := []uint64{2, 9, 30}
	var blocks [][]byte
	for _, b := range idx {
		blocks = append(blocks, mb[b])
	}
	err := CheckPlot(p, rootB, idx, blocks, mustProve(t, leavesB, idx))
	if !errors.Is(err, ErrNotRegenerated) || !strings.Contains(err.Error(), "block 2") {
		t.Fatalf("verdict %v, want %v for block 2", err, ErrNotRegenerated)
	}
	// A plot of cheap blocks (one hash round instead of two) is caught the same way.
	cheap := *p
	cheap.Rounds = 1
	mc, leavesC, rootC := build(t, &cheap)
	blocks = blocks[:0]
	for _, b := range idx {
		blocks = append(blocks, mc[b])
	}
	if err := CheckPlot(p, rootC, idx, blocks, mustProve(t, leavesC, idx)); !errors.Is(err, ErrNotRegenerated) {
		t.Fatalf("verdict %v, want %v", err, ErrNotRegenerated)
	}
}

func TestProveReportsReadErrors(t *testing.T) {
	p := tiny("miner A")
	m, _, root := build(t, p)
	for i := range m {
		if i%2 == 1 {
			m[i] = nil // a failing disk: half the blocks unreadable
		}
	}
	_, err := Prove(audit(p, root), m, 2)
	if err == nil || !strings.Contains(err.Error(), "reading plot block") {
		t.Fatalf("error %v", err)
	}
}

func TestBounds(t *testing.T) {
	for _, mut := range []func(*Audit){
		func(a *Audit) { a.BlockLog = MaxBlockLog + 1 },
		func(a *Audit) { a.Rounds = 0 },
		func(a *Audit) { a.Blocks = 1 },
		func(a *Audit) { a.Miner = nil },
		func(a *Audit) { a.Segment, a.Steps = MaxOpenBlocks*2, MaxOpenBlocks*2 },
	} {
		a := audit(tiny("m"), commit.CV{})
		mut(a)
		if a.Validate() == nil {
			t.Errorf("accepted %+v", a)
		}
	}
}

func TestOpeningEncoding(t *testing.T) {
	p := tiny("miner A")
	m, leaves, root := build(t, p)
	a := audit(p, root)
	cr, segs, op := proveAll(t, a, m, leaves)
	b, err := op.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeOpening(b, p.BlockLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(a, cr, segs, back); err != nil {
		t.Fatalf("decoded opening: %v", err)
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(append([]byte{}, b...), 0), {0xff, 0xff, 0xff, 0xff, 0}} {
		if _, err := DecodeOpening(bad, p.BlockLog); err == nil {
			t.Errorf("decoded %d bytes of garbage", len(bad))
		}
	}
}

func FuzzDecodeOpening(f *testing.F) {
	op := &Opening{Checkpoints: host.Opening{States: [][]byte{make([]byte, StateBytes)}}, Indices: []uint64{3}, Blocks: [][]byte{make([]byte, 1<<MinBlockLog)}}
	b, _ := op.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		op, err := DecodeOpening(b, MinBlockLog)
		if err != nil {
			return
		}
		again, err := op.MarshalBinary()
		if err != nil || string(again) != string(b) {
			t.Fatalf("decoded input does not re-encode to itself (%v)", err)
		}
	})
}

func TestRegeneratorWalksLikeThePlot(t *testing.T) {
	p := tiny("miner A")
	m, _, root := build(t, p)
	a := audit(p, root)
	stored, err := Prove(a, m, 1)
	if err != nil {
		t.Fatal(err)
	}
	regen, err := Prove(a, Regenerator{p}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range stored {
		if string(stored[i]) != string(regen[i]) {
			t.Fatalf("checkpoint %d differs", i)
		}
	}
	if (Regenerator{p}).ReadBlock(p.Blocks, make([]byte, p.BlockBytes())) == nil {
		t.Fatal("regenerated a block past the plot")
	}
}

func TestSampleFitsAnOpening(t *testing.T) {
	a := audit(&Plot{Miner: []byte("m"), BlockLog: MaxBlockLog, Rounds: 1, Blocks: 1 << 20}, commit.CV{})
	a.Steps, a.Segment = 1<<12, 16 // 16 MiB per opened segment: 4 fit
	if got := a.MaxSample(); got != 4 {
		t.Fatalf("MaxSample %d, want 4", got)
	}
	if segs := Sample([32]byte{}, commit.CV{1}, a, 66); len(segs) != 4 {
		t.Fatalf("sampled %d segments", len(segs))
	}
	err := Verify(a, commit.CV{}, []uint64{0, 1, 2, 3, 4}, &Opening{})
	if err == nil || !strings.Contains(err.Error(), "opens at most 4") {
		t.Fatalf("oversized sample: %v", err)
	}
}

// TestAuditOverACopiedPlotFailsRegeneration: miner A announces the root of
// miner B's plot and answers its audits from B's blocks. The walk verifies
// (it only hashes), the regeneration of the first sampled blocks does not;
// A's own plot passes both.
func TestAuditOverACopiedPlotFailsRegeneration(t *testing.T) {
	p := tiny("miner A")
	mb, leavesB, rootB := build(t, tiny("miner B"))
	a := audit(p, rootB)
	cr, segs, op := proveAll(t, a, mb, leavesB)
	if err := Verify(a, cr, segs, op); err != nil {
		t.Fatalf("the walk over the copy: %v", err)
	}
	if err := CheckRegenerated(a, segs, op, 2); !errors.Is(err, ErrNotRegenerated) {
		t.Fatalf("verdict %v, want %v", err, ErrNotRegenerated)
	}
	m, leaves, root := build(t, p)
	a = audit(p, root)
	cr, segs, op = proveAll(t, a, m, leaves)
	if err := Verify(a, cr, segs, op); err != nil {
		t.Fatal(err)
	}
	if err := CheckRegenerated(a, segs, op, 2); err != nil {
		t.Fatalf("A's own plot: %v", err)
	}
}
