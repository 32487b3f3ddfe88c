package memwalk

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

func tinyEpoch() Epoch { return Epoch{Seed: [32]byte{5}, CacheLog: 6, Rounds: 8} }

func tiny(miner string) *Params {
	p := &Params{Epoch: tinyEpoch(), Miner: []byte(miner), Items: 1000,
		Shape: host.Shape{Chains: 4, Steps: 64, Segment: 16}}
	p.Seed[0] = 3
	return p
}

func setup(t *testing.T, p *Params) (*Cache, *Dataset) {
	t.Helper()
	c, err := NewCache(&p.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(c.For(p.Miner), p.Items, 2)
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// commitAll commits states and opens every segment, so each check below is
// certain to see the segment it corrupts.
func commitAll(t *testing.T, p *Params, states [][]byte) (commit.CV, []uint64, *host.Opening) {
	t.Helper()
	root, leaves, err := host.Commit(Tag, states)
	if err != nil {
		t.Fatal(err)
	}
	segs := host.Sample([32]byte{2}, root, p.Encode(), p.Shape, int(p.Leaves()))
	op, err := host.Open(p.Shape, states, leaves, segs)
	if err != nil {
		t.Fatal(err)
	}
	return root, segs, op
}

func TestHonestVerifiesFromTheLightCache(t *testing.T) {
	p := tiny("miner A")
	c, d := setup(t, p)
	states, err := Prove(p, d, 0)
	if err != nil {
		t.Fatal(err)
	}
	root, segs, op := commitAll(t, p, states)
	if err := Verify(p, c, root, segs, op); err != nil {
		t.Fatal(err)
	}
	// Proving from the cache (the recomputing cheater) gives the same
	// checkpoints: only the time differs.
	again, _ := Prove(p, c.For(p.Miner), 1)
	for i := range states {
		if string(again[i]) != string(states[i]) {
			t.Fatalf("checkpoint %d differs between dataset and cache", i)
		}
	}
}

func TestDatasetIsAPrefixOfLarger(t *testing.T) {
	p := tiny("m")
	c, d := setup(t, p)
	big, _ := Build(c.For(p.Miner), 2*p.Items, 3)
	var a, b [ItemWords]uint64
	for _, i := range []uint64{0, 1, 499, 999} {
		d.Load(i, &a)
		big.Load(i, &b)
		if a != b {
			t.Fatalf("item %d depends on the dataset size", i)
		}
	}
}

// corrupt is a dataset with item i altered: a miner that stored or computed
// one item wrongly.
type corrupt struct {
	*Dataset
	bad uint64
}

func (c corrupt) Load(i uint64, r *[ItemWords]uint64) {
	c.Dataset.Load(i, r)
	if i == c.bad {
		r[3] ^= 1
	}
}

func TestBadProofs(t *testing.T) {
	p := tiny("miner A")
	c, d := setup(t, p)
	// The item walk 1 reads at its 20th step: in segment 5 (walk 1, steps 16–31).
	x := Walk(d, p.Items, Initial(p, 1), 19)
	wrongItem := corrupt{d, x % p.Items}
	// One host proving for two identities from one dataset: miner B's.
	shared, err := Build(c.For([]byte("miner B")), p.Items, 2)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		src    Source
		verify *Params
		cache  *Cache
		edit   func([][]byte)
		reason error
		text   string
	}{
		{"wrong item", wrongItem, p, c, nil, ErrSegment, "segment 5 (walk 1, steps 16–31)"},
		{"wrong checkpoint", d, p, c, func(s [][]byte) { s[10] = binary.LittleEndian.AppendUint64(nil, 9) }, ErrSegment, "segment 10"},
		{"proof for another identity", d, tiny("miner B"), c, nil, ErrSegment, "segment 0 (walk 0"},
		{"another identity's dataset", shared, p, c, nil, ErrSegment, "segment 0 (walk 0"},
		{"cache of another epoch", d, p, otherCache(t), nil, ErrSegment, "segment 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			states, err := Prove(p, tc.src, 2)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(states)
			}
			root, segs, op := commitAll(t, p, states)
			err = Verify(tc.verify, tc.cache, root, segs, op)
			if !errors.Is(err, tc.reason) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("verdict %v, want %v mentioning %q", err, tc.reason, tc.text)
			}
		})
	}
}

func otherCache(t *testing.T) *Cache {
	e := tinyEpoch()
	e.Seed[0]++
	c, err := NewCache(&e)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCacheMustMatchTheEpochShape(t *testing.T) {
	p := tiny("m")
	c, d := setup(t, p)
	states, _ := Prove(p, d, 1)
	root, segs, op := commitAll(t, p, states)
	q := *p
	q.Rounds++
	if err := Verify(&q, c, root, segs, op); err == nil || !strings.Contains(err.Error(), "epoch parameters") {
		t.Fatalf("verdict %v", err)
	}
}

func TestBounds(t *testing.T) {
	for _, mut := range []func(*Params){
		func(p *Params) { p.CacheLog = MaxCacheLog + 1 },
		func(p *Params) { p.Rounds = 0 },
		func(p *Params) { p.Items = 1 },
		func(p *Params) { p.Items = MaxItems + 1 },
		func(p *Params) { p.Miner = make([]byte, 256) },
	} {
		p := tiny("m")
		mut(p)
		if p.Validate() == nil {
			t.Errorf("accepted %+v", p)
		}
	}
}

func TestDiskSourceWalksLikeTheDataset(t *testing.T) {
	p := tiny("m")
	_, d := setup(t, p)
	path := t.TempDir() + "/dataset"
	if err := d.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if d.WriteFile(path) == nil {
		t.Fatal("overwrote a dataset file")
	}
	s, err := OpenDiskSource(path, p.Items)
	if err != nil {
		t.Fatal(err)
	}
	if Walk(s, p.Items, 5, 100) != Walk(d, p.Items, 5, 100) || s.Err() != nil {
		t.Fatalf("the file walks differently (%v)", s.Err())
	}
	if _, err := OpenDiskSource(path, p.Items+1); err == nil {
		t.Fatal("size mismatch not caught")
	}
	s.Close()
	var r [ItemWords]uint64
	if s.Load(0, &r); s.Err() == nil {
		t.Fatal("a failed read left no error")
	}
}
