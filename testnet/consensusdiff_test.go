package testnet

import (
	"bytes"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/record/recordtest"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/report"
)

// A node whose final set of epoch 1 left out a record that arrived after
// the epoch was final computes another consensus than the rest: the
// summary takes the majority's hash even though that node comes first,
// names it with the late record and when it arrived, and in epoch 2, whose
// records it counts like everyone, says its bonds carry the difference. A
// node that froze epoch 1 empty, and so has no consensus of it, is named
// too rather than ending the summary.
func TestConsensusNamesTheNodeThatDiffers(t *testing.T) {
	r := &run{cfg: DefaultConfig(), start: time.Unix(0, 0), byID: map[peer.ID]*member{},
		have: map[uint64]map[[2]peer.ID]time.Time{}}
	mk := func(name string) (*member, crypto.PrivKey) {
		k, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := peer.IDFromPrivateKey(k)
		st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		m := &member{info: report.Node{Name: name}, id: id, store: st}
		r.byID[id] = m
		return m, k
	}
	v0, k0 := mk("validator-0")
	v1, k1 := mk("validator-1")
	late, _ := mk("miner-late")
	empty, _ := mk("miner-empty")
	a, _ := mk("miner-a")
	b, _ := mk("miner-b")
	nodes := []*member{late, v0, v1, empty, a, b}
	var prev [2][32]byte
	for e := uint64(1); e <= 2; e++ {
		var set store.FinalSet
		for i, k := range []crypto.PrivKey{k0, k1} {
			w := map[peer.ID]float64{a.id: 0.2 + 0.6*float64(i), b.id: 0.8 - 0.6*float64(i)}
			raw, id, err := recordtest.EpochRecord(k, e, prev[i], w)
			if err != nil {
				t.Fatal(err)
			}
			prev[i] = id
			v := []*member{v0, v1}[i]
			for _, m := range nodes {
				if err := m.store.PutEpochRecord(e, []byte(v.id), raw); err != nil {
					t.Fatal(err)
				}
			}
			set.Included = append(set.Included, store.FinalRecord{Validator: []byte(v.id), ID: id})
		}
		slices.SortFunc(set.Included, func(x, y store.FinalRecord) int { return bytes.Compare(x.Validator, y.Validator) })
		for _, m := range nodes {
			f := set
			switch {
			case m == late && e == 1:
				f.Included = slices.DeleteFunc(slices.Clone(set.Included), func(x store.FinalRecord) bool { return bytes.Equal(x.Validator, []byte(v1.id)) })
			case m == empty && e == 1:
				f.Included = nil // no record had arrived when epoch 1 became final
			}
			if err := m.store.PutFinal(e, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.have[1] = map[[2]peer.ID]time.Time{{late.id, v1.id}: time.Unix(170, 0), {a.id, v1.id}: time.Unix(130, 0), {b.id, v1.id}: time.Unix(131, 0)}
	if got := r.recordSeconds(1); len(got) != 1 || got["validator-1"] != [2]float64{130, 170} {
		t.Errorf("record seconds %v, want validator-1's from 130 to 170 s", got)
	}

	es := &epochSummary{r: r, validators: []*member{v0, v1}, nodes: nodes, missing: map[string][]uint64{},
		differed: map[*member]bool{}, full: map[*member]bool{}}
	for _, m := range nodes {
		es.full[m] = true
	}
	want := map[uint64][]string{
		1: {"miner-late: its final set (epoch final at 160.0 s) leaves out validator-1's record (stored at 170.0 s)",
			"miner-empty: no epoch records count up to epoch 1; its final set (epoch final at 160.0 s) leaves out validator-0's record, validator-1's record"},
		2: {"miner-late: the same records counted; its consensus of an earlier epoch differed, and bonds carry",
			"miner-empty: the same records counted; its consensus of an earlier epoch differed, and bonds carry"},
	}
	hashes := map[string]bool{}
	for e := uint64(1); e <= 2; e++ {
		ep := report.Epoch{Epoch: e, Consensus: map[string]float64{}, Incentive: map[string]float64{}, Trust: map[string]float64{}, Identical: true}
		if err := es.consensus(&ep); err != nil {
			t.Fatal(err)
		}
		if ep.Identical || !slices.Equal(ep.Differs, want[e]) {
			t.Errorf("epoch %d: identical %v, differs %q; want %q", e, ep.Identical, ep.Differs, want[e])
		}
		if len(ep.Incentive) != 2 || len(ep.Trust) != 2 || hashes[ep.ConsensusHash] {
			t.Errorf("epoch %d: figures %v %v from hash %s", e, ep.Incentive, ep.Trust, ep.ConsensusHash)
		}
		hashes[ep.ConsensusHash] = true
	}
}
