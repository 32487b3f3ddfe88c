package node

import (
	"testing"
	"time"

	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"google.golang.org/protobuf/proto"
)

// TestRAMSeedAgreesAcrossViews: nodes that stored the records and proofs
// of the epoch that once made a period's beacon (p·P − F − 2) on either
// side of its finality time, or started after it ended, still derive one
// RAM epoch for the period; the next period's differs.
func TestRAMSeedAgreesAcrossViews(t *testing.T) {
	c := testConfig()
	c.Network.RAMPeriodEpochs, c.Network.FinalityEpochs = 10, 2
	c.Network.EpochLength = config.Duration{Duration: time.Minute}
	const p, b = 3, 26
	l := c.Network.EpochLength.Duration
	final := epoch.FinalAt(b, c.Network.FinalityEpochs, l)
	ended, before, after := time.Unix(0, int64(b+1)*int64(l)), final.Add(-time.Second), final.Add(time.Second)

	kh, h := nodetest.Key(t)
	kx, x := nodetest.Key(t)
	honest, _ := nodetest.EpochRecord(t, kh, b, [32]byte{}, nil)
	late, _ := nodetest.EpochRecord(t, kx, b, [32]byte{}, nil)
	other, _ := nodetest.EpochRecord(t, kx, b, [32]byte{1}, nil)
	m, err := protocol.NewEquivocationProof(late, other)
	if err != nil {
		t.Fatal(err)
	}
	proof, _ := proto.Marshal(m)

	// A delivery stores a record (or, with isProof, x's proof) at a time.
	type delivery struct {
		at      time.Time
		v       peer.ID
		raw     []byte
		isProof bool
	}
	onTime := delivery{ended, h, honest, false}
	views := []struct {
		name    string
		started time.Time
		got     []delivery
	}{
		{"x's record after finality", time.Unix(0, 0), []delivery{onTime, {after, x, late, false}}},
		{"x's record just before finality", time.Unix(0, 0), []delivery{onTime, {before, x, late, false}}},
		{"started after the epoch ended", ended.Add(time.Second), []delivery{onTime, {after, x, late, false}}},
		{"x's other record before finality", time.Unix(0, 0), []delivery{onTime, {before, x, other, false}}},
		{"x proven before finality", time.Unix(0, 0), []delivery{onTime, {before, x, late, false}, {before, x, proof, true}}},
		{"x proven after finality", time.Unix(0, 0), []delivery{onTime, {before, x, late, false}, {after, x, proof, true}}},
	}
	var want [2]string
	for i, v := range views {
		st := nodetest.MemStore(t)
		z := epoch.NewFinality(st, c.Network.FinalityEpochs, l, v.started)
		for _, d := range v.got {
			if d.isProof {
				_, err = z.PutProof(d.at, b, []byte(d.v), d.raw)
			} else {
				err = z.PutRecord(d.at, b, []byte(d.v), d.raw)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Tick(final.Add(2 * l)); err != nil {
			t.Fatal(err)
		}
		n := &Node{cfg: c, store: st}
		var got [2]string
		for j, e := range []uint64{p * 10, p*10 + 10} {
			re, err := n.ramEpoch(e)
			if err != nil {
				t.Fatal(err)
			}
			got[j] = string(re.Seed[:])
		}
		if got[0] == got[1] {
			t.Fatalf("%s: periods %d and %d have one seed", v.name, p, p+1)
		}
		if i == 0 {
			want = got
		} else if got != want {
			t.Errorf("%s: RAM seeds differ from %s's", v.name, views[0].name)
		}
	}
}
