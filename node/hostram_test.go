package node

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// TestRAMBeacon: a RAM period's seed takes the beacon of epoch p·P − F − 2
// once a record of that epoch counts: of every record held less proven
// equivocators' (reused for ramBeaconTTL), until the epoch's final set
// decides for good; before any counts, and for periods the epochs do not
// reach back from, it is the period's seed alone.
func TestRAMBeacon(t *testing.T) {
	c := testConfig().Network
	c.RAMPeriodEpochs, c.FinalityEpochs = 10, 2
	const p = 3
	b, ok := beaconEpoch(c, p)
	if !ok || b != 26 {
		t.Fatalf("beacon epoch of period 3: %d %v, want 26", b, ok)
	}
	if _, ok := beaconEpoch(c, 0); ok {
		t.Fatal("period 0 has a beacon epoch")
	}
	st := memStore(t)
	epoch := func(r *ramBeacons) memwalk.Epoch {
		t.Helper()
		e, err := r.epoch(st, c, p, b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	alone := periodEpoch(c, p, nil)
	var early ramBeacons
	if e := epoch(&early); e != alone {
		t.Fatal("without records the seed is not the period's alone")
	}
	k1, v1 := testKey(t)
	k2, v2 := testKey(t)
	raw1, id1 := testEpochRecord(t, k1, b, [32]byte{}, nil)
	raw2, id2 := testEpochRecord(t, k2, b, [32]byte{}, nil)
	other, _ := testEpochRecord(t, k1, b+1, id1, nil)
	for _, x := range []signed{{b, v1, raw1}, {b, v2, raw2}, {b + 1, v1, other}} {
		if err := st.PutEpochRecord(x.e, []byte(x.v), x.raw); err != nil {
			t.Fatal(err)
		}
	}
	ids := [][32]byte{id1, id2}
	if bytes.Compare([]byte(v2), []byte(v1)) < 0 {
		ids = [][32]byte{id2, id1}
	}
	both := memwalk.Beacon(ids)
	if e := epoch(&ramBeacons{}); e != periodEpoch(c, p, &both) || e == alone {
		t.Fatal("the seed is not the beacon of both records of the beacon epoch")
	}
	if e := epoch(&early); e != alone {
		t.Fatal("a RAM epoch without a final set is recomputed within ramBeaconTTL")
	}
	// v2 proven to equivocate: its record no longer counts.
	y, _ := testEpochRecord(t, k2, b, [32]byte{1}, nil)
	m, err := protocol.NewEquivocationProof(raw2, y)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := proto.Marshal(m)
	if _, err := st.PutEquivocation(b, []byte(v2), pb); err != nil {
		t.Fatal(err)
	}
	one := memwalk.Beacon([][32]byte{id1})
	if e := epoch(&ramBeacons{}); e != periodEpoch(c, p, &one) {
		t.Fatal("an equivocator's record counts in the beacon")
	}
	// The final set decides, and is remembered for good: here it counts
	// v2's record alone, and the store closing afterwards changes nothing.
	if err := st.PutFinal(b, store.FinalSet{Included: []store.FinalRecord{{Validator: []byte(v2), ID: id2}}}); err != nil {
		t.Fatal(err)
	}
	var r ramBeacons
	final := memwalk.Beacon([][32]byte{id2})
	if e := epoch(&r); e != periodEpoch(c, p, &final) {
		t.Fatal("the final set does not decide the beacon")
	}
	st.Close()
	if e := epoch(&r); e != periodEpoch(c, p, &final) {
		t.Fatal("a final beacon is recomputed")
	}
}

// TestRAMRoundOnBeaconSeed: on a network with 2-epoch RAM periods, once
// the validator's records of a period's beacon epoch are final, the
// validator and the miner derive the same beacon seed, and a RAM round on
// it verifies.
func TestRAMRoundOnBeaconSeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Validator.RoundOffset = Duration{time.Hour} // runHost is called directly
		cfg.Network.EpochLength = Duration{time.Second}
		cfg.Network.RAMPeriodEpochs, cfg.Network.FinalityEpochs = 2, 1
		cfg.Validator.HostRAMSteps = 1 << 12
		cfg.Miner.RAMBytes = 64 * ramItems
		v := tn.start(RoleValidator, cfg, nil)
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		var e uint64
		var seed memwalk.Epoch
		// Look every 100 ms of the bubble's clock: which period first has a
		// beacon depends on the epochs the validator recorded.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			e = v.view.epochAt(time.Now())
			var err error
			if seed, err = v.ramEpoch(e); err != nil {
				t.Fatal(err)
			}
			if seed != periodEpoch(v.cfg.Network, e/2, nil) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no beacon seed within 30 s")
			}
		}
		if mine, err := m.ramEpoch(e); err != nil || mine != seed {
			t.Fatalf("the miner's RAM epoch of epoch %d differs from the validator's (%v)", e, err)
		}
		res, rec := playRAM(t, v, m, ramItems, e)
		if !res.out.Verified {
			t.Fatalf("RAM round on the beacon seed: %q", res.out.Reason)
		}
		if got := res.plan.ch.Proof.(ramProof).Epoch; got != seed {
			t.Fatal("the round's RAM epoch is not the beacon seed")
		}
		if err := auditHostRecord(rec); err != nil {
			t.Fatalf("its record: %v", err)
		}
	})
}
