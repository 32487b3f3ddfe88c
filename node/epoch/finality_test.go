package epoch

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

const testLength = 10 * time.Second

func at(s int64) time.Time { return time.Unix(s, 0) }

func TestFreezeRule(t *testing.T) {
	// F = 2, L = 10 s: epoch 5 ends (its records are published) at 60 s
	// and is final at the end of epoch 7, t = 80 s.
	for _, c := range []struct {
		started, now  int64
		final, freeze bool
	}{
		{0, 79, false, false},
		{0, 80, true, true},
		{60, 80, true, true},   // started as its records were published
		{61, 80, true, false},  // started after: cannot tell which came late
		{80, 80, true, false},  // started exactly at the finality time
		{81, 500, true, false}, // not running then: counts what it holds
		{50, 1000, true, true},
	} {
		final, freeze := freezeRule(5, 2, testLength, at(c.started), at(c.now))
		if final != c.final || freeze != c.freeze {
			t.Errorf("started %d now %d: final %v freeze %v, want %v %v", c.started, c.now, final, freeze, c.final, c.freeze)
		}
	}
}

func TestFreezeRange(t *testing.T) {
	// F = 2, L = 10 s: epoch e ends at (e+1)·10 s and is final at
	// (e+3)·10 s.
	for _, c := range []struct {
		started, now int64
		from, to     uint64
		ok           bool
	}{
		{0, 29, 0, 0, false},
		{0, 30, 0, 0, true},
		{0, 59, 0, 2, true},
		{35, 39, 0, 0, false}, // no finality time in [35, 39]
		{35, 40, 0, 0, false}, // epoch 1 ended before it started
		{35, 60, 3, 3, true},
		{40, 60, 3, 3, true},
		{30, 60, 2, 3, true},
		{41, 75, 4, 4, true},
		{1000, 900, 0, 0, false},
	} {
		from, to, ok := freezeRange(2, testLength, at(c.started), at(c.now))
		if ok != c.ok || (ok && (from != c.from || to != c.to)) {
			t.Errorf("started %d now %d: %d..%d %v, want %d..%d %v", c.started, c.now, from, to, ok, c.from, c.to, c.ok)
		}
		// Every epoch in the range, and none next to it, is one freezeRule
		// freezes.
		for e := uint64(0); e < 10; e++ {
			_, freeze := freezeRule(e, 2, testLength, at(c.started), at(c.now))
			if in := ok && e >= from && e <= to; in != freeze {
				t.Errorf("started %d now %d: epoch %d in range %v, freezeRule %v", c.started, c.now, e, in, freeze)
			}
		}
	}
}

func TestSelectRecords(t *testing.T) {
	row := func(v string, id byte) recordRow {
		return recordRow{validator: []byte(v), id: [32]byte{id}, weights: map[string]float64{"m": 1}}
	}
	rows := []recordRow{row("a", 1), row("b", 2), row("c", 3)}
	names := func(rs []recordRow) string {
		var s []string
		for _, r := range rs {
			s = append(s, string(r.validator))
		}
		return fmt.Sprint(s)
	}
	final := func(inc map[string]byte, exc ...string) *store.FinalSet {
		var recs []store.FinalRecord
		for v, id := range inc {
			recs = append(recs, store.FinalRecord{Validator: []byte(v), ID: [32]byte{id}})
		}
		var proven [][]byte
		for _, v := range exc {
			proven = append(proven, []byte(v))
		}
		f := finalSetOf(recs, proven)
		return &f
	}
	for _, c := range []struct {
		name     string
		final    *store.FinalSet
		proven   []string
		counted  string
		excluded string
		err      bool
	}{
		{"open epoch: everything counts", nil, nil, "[a b c]", "[]", false},
		{"open epoch: a proven equivocator is out", nil, []string{"b"}, "[a c]", "[b]", false},
		{"final: only what the set names", final(map[string]byte{"a": 1, "c": 3}), nil, "[a c]", "[]", false},
		{"final: a late proof changes nothing", final(map[string]byte{"a": 1, "b": 2, "c": 3}), []string{"b"}, "[a b c]", "[]", false},
		{"final: its own excluded", final(map[string]byte{"a": 1, "c": 3}, "b"), nil, "[a c]", "[b]", false},
		{"final: another record of a named validator", final(map[string]byte{"a": 9}), nil, "", "", true},
		{"final: a named record missing", final(map[string]byte{"d": 4}), nil, "", "", true},
	} {
		var proven [][]byte
		for _, v := range c.proven {
			proven = append(proven, []byte(v))
		}
		counted, excluded, err := selectRecords(rows, c.final, proven)
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if err != nil {
			continue
		}
		var ex []string
		for _, v := range excluded {
			ex = append(ex, string(v))
		}
		if names(counted) != c.counted || fmt.Sprint(ex) != c.excluded {
			t.Errorf("%s: counted %s excluded %v, want %s %s", c.name, names(counted), ex, c.counted, c.excluded)
		}
	}
}

func TestEpochInputStakes(t *testing.T) {
	a, b, c := nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t)
	rows := []recordRow{{validator: []byte(a), weights: map[string]float64{"m": 1}}}
	// Genesis: the whole set stays; an excluded validator's stake is zero.
	genesis := map[string]float64{a.String(): 2, b.String(): 3, c.String(): 5}
	in := epochInput(rows, [][]byte{[]byte(b)}, genesis, nil, nil)
	if in.Stakes[a.String()] != 2 || in.Stakes[b.String()] != 0 || in.Stakes[c.String()] != 5 || len(in.Weights) != 1 {
		t.Errorf("genesis input %+v", in)
	}
	if genesis[b.String()] != 3 {
		t.Error("epochInput changed the genesis stakes")
	}
	// No genesis: everyone counted so far has stake 1, the excluded 0.
	equal := map[string]float64{c.String(): 1}
	in = epochInput(rows, [][]byte{[]byte(b)}, nil, equal, nil)
	if in.Stakes[a.String()] != 1 || in.Stakes[b.String()] != 0 || in.Stakes[c.String()] != 1 || len(in.Stakes) != 3 {
		t.Errorf("equal-stake input %+v", in.Stakes)
	}
}

func TestPruneBound(t *testing.T) {
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, other := nodetest.Peer(t), nodetest.Peer(t)
	// v checkpointed epochs 3, 5 and 9 (down or behind in between); other
	// only 19.
	for _, c := range []struct {
		v peer.ID
		e uint64
	}{{v, 3}, {v, 5}, {v, 9}, {other, 19}} {
		if err := st.PutCheckpoint(store.Checkpoint{Epoch: c.e, Validator: []byte(c.v)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		v          peer.ID
		current, f uint64
		retain     int
		bound      uint64
		ok         bool
	}{
		{"", 10, 2, -1, 0, false}, // keep forever
		{"", 6, 2, 4, 0, false},   // nothing old enough
		{"", 7, 2, 4, 1, true},    // epoch 0 final at the end of 2, kept through 6
		{"", 20, 2, 4, 14, true},
		{"", 20, 2, 0, 18, true},
		{other, 20, 2, 4, 0, false}, // its only checkpoint is too recent
		{v, 8, 2, 4, 0, false},      // no checkpoint below 2
		{v, 12, 2, 4, 6, true},      // up to the checkpoint of 5, not into the gap
		{v, 20, 2, 4, 10, true},     // no further than one past its latest checkpoint
	} {
		bound, ok, err := PruneBound(st, c.v, c.current, c.f, c.retain)
		if err != nil || ok != c.ok || (ok && bound != c.bound) {
			t.Errorf("%+v: bound %d %v %v", c, bound, ok, err)
		}
	}
}

type signed struct {
	e   uint64
	v   peer.ID
	raw []byte
}

func consensusHash(t *testing.T, st *store.Store, e uint64, stakes map[string]float64) [32]byte {
	t.Helper()
	res, err := Consensus(st, e, stakes, consensus.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return res.Hash()
}

// Two honest nodes that both ran through epoch 5's finality time compute
// the same consensus, whatever order records came in and although one of
// them received a third validator's record after finality; a node that
// counted that late record computes another.
func TestFinalityAgreesDespiteLateRecords(t *testing.T) {
	keys := make([]crypto.PrivKey, 3)
	ids := make([]peer.ID, 3)
	stakes := map[string]float64{}
	for i := range keys {
		keys[i], ids[i] = nodetest.Key(t)
		stakes[ids[i].String()] = 1
	}
	m1, m2 := nodetest.Peer(t), nodetest.Peer(t)
	var recs []signed
	var prev [3][32]byte
	for e := uint64(5); e <= 6; e++ {
		for i := range keys {
			w := map[peer.ID]float64{m1: 0.5 + 0.1*float64(i), m2: 0.5 - 0.1*float64(i)}
			raw, id := nodetest.EpochRecord(t, keys[i], e, prev[i], w)
			prev[i] = id
			recs = append(recs, signed{e, ids[i], raw})
		}
	}
	// F = 2, L = 10 s: epoch 5 is final at 80 s, epoch 6 at 90 s.
	newFinality := func(st *store.Store, started int64) *Finality {
		return &Finality{st: st, f: 2, length: testLength, started: at(started)}
	}
	put := func(z *Finality, now int64, r signed) {
		t.Helper()
		if err := z.PutRecord(at(now), r.e, []byte(r.v), r.raw); err != nil {
			t.Fatal(err)
		}
	}
	tick := func(z *Finality, now int64) {
		t.Helper()
		if err := z.Tick(at(now)); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := nodetest.MemStore(t), nodetest.MemStore(t), nodetest.MemStore(t)
	za, zb, zc := newFinality(a, 0), newFinality(b, 0), newFinality(c, 200)
	// A: everything for epoch 5 in time, in order.
	put(za, 61, recs[0])
	put(za, 61, recs[1])
	put(za, 62, recs[2])
	tick(za, 80)
	// B: epoch 5's records of validators 1 and 0 in time, validator 2's
	// after finality (the tick ran late, so the record's own arrival
	// freezes the epoch first).
	put(zb, 61, recs[1])
	put(zb, 63, recs[0])
	// C: no record of validator 2 for epoch 5 until after it was final,
	// and not running then.
	put(zc, 61, recs[0])
	put(zc, 61, recs[1])
	put(zb, 85, recs[2])
	put(zc, 300, recs[2])
	tick(zb, 85)
	// Epoch 6: all records in time everywhere, in different orders.
	for _, i := range []int{3, 4, 5} {
		put(za, 71, recs[i])
	}
	for _, i := range []int{5, 3, 4} {
		put(zb, 72, recs[i])
		put(zc, 300, recs[i])
	}
	tick(za, 95)
	tick(zb, 95)

	if _, err := b.EpochRecord(5, []byte(ids[2])); err != nil {
		t.Fatalf("the late record was not stored: %v", err)
	}
	// D gets what B got, in another order: validator 2's epoch-5 record
	// also after finality.
	d := nodetest.MemStore(t)
	zd := newFinality(d, 0)
	put(zd, 65, recs[0])
	put(zd, 66, recs[1])
	tick(zd, 81)
	put(zd, 82, recs[2])
	for _, i := range []int{4, 5, 3} {
		put(zd, 73, recs[i])
	}
	tick(zd, 91)
	for _, e := range []uint64{5, 6} {
		ha, hb, hc, hd := consensusHash(t, a, e, stakes), consensusHash(t, b, e, stakes), consensusHash(t, c, e, stakes), consensusHash(t, d, e, stakes)
		if hb != hd {
			t.Errorf("epoch %d: two nodes that froze the same records disagree", e)
		}
		// A counted validator 2's record in time and so computes another
		// consensus (in epoch 6 through the bonds); C, not running at
		// epoch 5's finality, counts everything it holds, as A does.
		if ha == hb {
			t.Errorf("epoch %d: the late record was not ignored (A and B agree)", e)
		}
		if hc != ha {
			t.Errorf("epoch %d: C counted other records than A", e)
		}
	}
}

// A validator that sends different records to different nodes is proven
// by both, and its stake counts for nothing on either: they agree.
func TestEquivocatorStakeIgnored(t *testing.T) {
	keys := make([]crypto.PrivKey, 3)
	ids := make([]peer.ID, 3)
	stakes := map[string]float64{}
	for i := range keys {
		keys[i], ids[i] = nodetest.Key(t)
		stakes[ids[i].String()] = float64(i + 1)
	}
	m1, m2 := nodetest.Peer(t), nodetest.Peer(t)
	r0, _ := nodetest.EpochRecord(t, keys[0], 5, [32]byte{}, map[peer.ID]float64{m1: 1})
	r1, _ := nodetest.EpochRecord(t, keys[1], 5, [32]byte{}, map[peer.ID]float64{m1: 0.5, m2: 0.5})
	x, _ := nodetest.EpochRecord(t, keys[2], 5, [32]byte{}, map[peer.ID]float64{m1: 1})
	y, _ := nodetest.EpochRecord(t, keys[2], 5, [32]byte{}, map[peer.ID]float64{m2: 1})
	p, err := protocol.NewEquivocationProof(x, y)
	if err != nil {
		t.Fatal(err)
	}
	proof, _ := proto.Marshal(p)
	half := func(mine []byte, withProof bool) *store.Store {
		st := nodetest.MemStore(t)
		z := &Finality{st: st, f: 2, length: testLength, started: at(0)}
		for _, r := range []signed{{5, ids[0], r0}, {5, ids[1], r1}, {5, ids[2], mine}} {
			if err := z.PutRecord(at(61), r.e, []byte(r.v), r.raw); err != nil {
				t.Fatal(err)
			}
		}
		// The other half's record is refused, and proves equivocation.
		other := y
		if bytes.Equal(mine, y) {
			other = x
		}
		if err := z.PutRecord(at(62), 5, []byte(ids[2]), other); !errors.Is(err, store.ErrExists) {
			t.Fatalf("second record: %v", err)
		}
		if withProof {
			if first, err := z.PutProof(at(63), 5, []byte(ids[2]), proof); !first || err != nil {
				t.Fatal(first, err)
			}
		}
		return st
	}
	hx, hy := consensusHash(t, half(x, true), 5, stakes), consensusHash(t, half(y, true), 5, stakes)
	if hx != hy {
		t.Fatal("the two halves disagree although both hold the proof")
	}
	if consensusHash(t, half(x, false), 5, stakes) == consensusHash(t, half(y, false), 5, stakes) {
		t.Fatal("without the proof the halves agree: the test shows nothing")
	}
	res, err := Consensus(half(x, true), 5, stakes, consensus.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(res.Validators, ids[2].String())
	if i < 0 || res.Active[i] || res.Stake[i] != 0 {
		t.Fatalf("the equivocator counts: active %v stake %v", res.Active, res.Stake)
	}
	// A proof that arrives after the epoch was frozen changes nothing: the
	// final set named the equivocator's record.
	late := half(x, false)
	z := &Finality{st: late, f: 2, length: testLength, started: at(0)}
	before := consensusHash(t, late, 5, stakes)
	if _, err := z.PutProof(at(81), 5, []byte(ids[2]), proof); err != nil {
		t.Fatal(err)
	}
	if consensusHash(t, late, 5, stakes) != before {
		t.Fatal("a proof stored after finality changed the final consensus")
	}
}

func TestStakeSet(t *testing.T) {
	home := t.TempDir()
	c := config.DefaultConfig()
	if s, err := StakeSet(home, c); s != nil || err != nil {
		t.Fatalf("no genesis, no validators: %v %v", s, err)
	}
	a, b := nodetest.Peer(t), nodetest.Peer(t)
	c.Network.Validators = []string{a.String(), b.String()}
	s, err := StakeSet(home, c)
	if err != nil || len(s) != 2 || s[a.String()] != 1 || s[b.String()] != 1 {
		t.Fatalf("network.validators: %v %v", s, err)
	}
}

// A frozen epoch that holds a record of a validator outside the genesis
// set computes as if the record were absent.
func TestFinalSetWithOutsider(t *testing.T) {
	key, v := nodetest.Key(t)
	okey, _ := nodetest.Key(t)
	m := nodetest.Peer(t)
	in, _ := nodetest.EpochRecord(t, key, 5, [32]byte{}, map[peer.ID]float64{m: 1})
	out, _ := nodetest.EpochRecord(t, okey, 5, [32]byte{}, map[peer.ID]float64{m: 1})
	stakes := map[string]float64{v.String(): 1}
	hash := func(recs ...[]byte) [32]byte {
		st := nodetest.MemStore(t)
		z := &Finality{st: st, f: 2, length: testLength, started: at(0)}
		for _, raw := range recs {
			o, _ := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
			if err := z.PutRecord(at(61), 5, []byte(o.Author), raw); err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Tick(at(80)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Final(5); err != nil {
			t.Fatal(err)
		}
		return consensusHash(t, st, 5, stakes)
	}
	if hash(in, out) != hash(in) {
		t.Fatal("an outsider's record changed a final epoch's consensus")
	}
}
