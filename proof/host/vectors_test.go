package host_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/pog-network/pog/internal/specvec"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"lukechampine.com/blake3"
)

// The vectors of SPEC §23.5: every derived value a reimplementation of the
// three verifiers needs, for tiny parameters. seed[i] = i, the miner is the
// ASCII string "pog test miner", the sampling secret is 32 bytes of 0x01.
var (
	seed = func() (s [32]byte) {
		for i := range s {
			s[i] = byte(i)
		}
		return s
	}()
	miner  = []byte("pog test miner")
	secret = [32]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
)

func vectors(t *testing.T) []string {
	var out []string
	add := func(name string, v any) { out = append(out, fmt.Sprintf("%s %v", name, v)) }
	commitSample := func(tag, name string, s host.Shape, enc []byte, states [][]byte) {
		root, leaves, err := host.Commit(tag, states)
		if err != nil {
			t.Fatal(err)
		}
		add(name+".leaf0", hex.EncodeToString(leaves[0][:]))
		add(name+".root", hex.EncodeToString(root[:]))
		add(name+".sample3", fmt.Sprint(host.Sample(secret, root, enc, s, 3)))
	}

	cp := &cpuwork.Params{Seed: seed, Miner: miner, TableLog: 10, Shape: host.Shape{Chains: 2, Steps: 64, Segment: 16}, WindowMs: 2000, RunMs: 1900, ScaleLog: 10}
	tab := cpuwork.Table(cp)
	add("cpu.params", hex.EncodeToString(cp.Encode()))
	add("cpu.table[0]", fmt.Sprintf("%016x", tab[0]))
	add("cpu.table[1023]", fmt.Sprintf("%016x", tab[1023]))
	x := cpuwork.Initial(cp, 1)
	add("cpu.initial(1)", hex.EncodeToString(x.Bytes()))
	cpuwork.Run(tab, &x, 1)
	add("cpu.initial(1)+1step", hex.EncodeToString(x.Bytes()))
	states, err := cpuwork.Prove(cp, 1)
	if err != nil {
		t.Fatal(err)
	}
	add("cpu.checkpoint0", hex.EncodeToString(states[0]))
	commitSample(cpuwork.Tag, "cpu", cp.Shape, cp.Encode(), states)

	mp := &memwalk.Params{Epoch: memwalk.Epoch{Seed: seed, CacheLog: 4, Rounds: 4}, Seed: seed, Miner: miner, Items: 1000,
		Shape: host.Shape{Chains: 2, Steps: 32, Segment: 8}}
	cache, err := memwalk.NewCache(&mp.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	add("ram.params", hex.EncodeToString(mp.Encode()))
	items := cache.For(miner)
	var item [memwalk.ItemWords]uint64
	for _, i := range []uint64{0, 999} {
		items.Item(i, &item)
		add(fmt.Sprintf("ram.item(%d)", i), fmt.Sprintf("%016x", item))
	}
	w := memwalk.Initial(mp, 1)
	add("ram.initial(1)", fmt.Sprintf("%016x", w))
	add("ram.initial(1)+1step", fmt.Sprintf("%016x", memwalk.Walk(items, mp.Items, w, 1)))
	if states, err = memwalk.Prove(mp, items, 1); err != nil {
		t.Fatal(err)
	}
	add("ram.checkpoint0", hex.EncodeToString(states[0]))
	commitSample(memwalk.Tag, "ram", mp.Shape, mp.Encode(), states)
	ps := memwalk.PeriodSeed(7)
	add("ram.period_seed(7)", hex.EncodeToString(ps[:]))

	pp := &plot.Plot{Miner: miner, BlockLog: 10, Rounds: 2, Blocks: 8}
	m := make([][]byte, pp.Blocks)
	_, proot, err := plot.Build(pp, 1, func(b uint64, blk []byte) error { m[b] = append([]byte(nil), blk...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	add("plot.params", hex.EncodeToString(pp.Encode()))
	add("plot.block(0)[0:64]", hex.EncodeToString(m[0][:64]))
	add("plot.blake3(block(7))", fmt.Sprintf("%x", blake3.Sum256(m[7])))
	add("plot.leaf(7)", fmt.Sprintf("%x", pp.Leaf(7, m[7])))
	add("plot.root", hex.EncodeToString(proot[:]))
	a := &plot.Audit{Plot: *pp, Root: proot, Seed: seed, Shape: host.Shape{Chains: 2, Steps: 8, Segment: 4}}
	s0 := plot.Initial(a, 1)
	add("plot.audit.params", hex.EncodeToString(a.Encode()))
	add("plot.initial(1)", hex.EncodeToString(s0[:]))
	if states, err = plot.Prove(a, memPlot(m), 1); err != nil {
		t.Fatal(err)
	}
	add("plot.checkpoint0", hex.EncodeToString(states[0]))
	commitSample(plot.Tag, "plot.audit", a.Shape, a.Encode(), states)
	return out
}

type memPlot [][]byte

func (m memPlot) ReadBlock(b uint64, dst []byte) error { copy(dst, m[b]); return nil }

func TestVectors(t *testing.T) {
	got := vectors(t)
	want, err := specvec.Block(specvec.Path(), "host")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d vectors, SPEC §23.5 lists %d; they are:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("vector differs from SPEC §23.5:\n got  %s\n want %s", got[i], want[i])
		}
	}
}
