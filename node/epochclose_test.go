package node

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

// signed is one validator's sealed epoch record.
type signed struct {
	e   uint64
	v   peer.ID
	raw []byte
}

// Audit accepts a chain that continues from either record of a proven
// equivocation, checks stored proofs, and flags a forged one.
func TestAuditEquivocation(t *testing.T) {
	key, v := nodetest.Key(t)
	m := nodetest.Peer(t)
	x, idx := nodetest.EpochRecord(t, key, 5, [32]byte{}, map[peer.ID]float64{m: 1})
	y, idy := nodetest.EpochRecord(t, key, 5, [32]byte{}, map[peer.ID]float64{m: 0.5})
	next, _ := nodetest.EpochRecord(t, key, 6, idy, map[peer.ID]float64{m: 1}) // continues from y
	_ = idx
	st := nodetest.MemStore(t)
	for _, r := range []signed{{5, v, x}, {6, v, next}} {
		if err := st.PutEpochRecord(r.e, []byte(r.v), r.raw); err != nil {
			t.Fatal(err)
		}
	}
	auditNow := func() *audit.Report {
		rep, err := audit.Audit(st, audit.Options{Consensus: consensus.DefaultParams(), Local: []peer.ID{}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := auditNow(); len(rep.Problems) != 1 || !bytes.Contains([]byte(rep.Problems[0]), []byte("hash chain broken")) {
		t.Fatalf("without the proof: %v", rep.Problems)
	}
	p, _ := protocol.NewEquivocationProof(x, y)
	raw, _ := proto.Marshal(p)
	if _, err := st.PutEquivocation(5, []byte(v), raw); err != nil {
		t.Fatal(err)
	}
	if rep := auditNow(); len(rep.Problems) != 0 || rep.Equivocations != 1 {
		t.Fatalf("with the proof: %v (%d proofs)", rep.Problems, rep.Equivocations)
	}
	// Replace the proof with one whose second record is altered.
	forged := proto.Clone(p).(*pb.EquivocationProof)
	forged.RecordB = bytes.Clone(forged.RecordB)
	forged.RecordB[len(forged.RecordB)-1] ^= 1
	fraw, _ := proto.Marshal(forged)
	key5 := append([]byte{'q', 0, 0, 0, 0, 0, 0, 0, 5}, []byte(v)...)
	if err := st.Tamper(func(db *pebble.DB) error { return db.Set(key5, append([]byte{1}, fraw...), pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	if rep := auditNow(); len(rep.Problems) == 0 {
		t.Fatal("forged proof passed audit")
	}

	// A node that got the proof before either record ignores both: it
	// holds the validator's records before and after, and the proof.
	prevRec, prevID := nodetest.EpochRecord(t, key, 4, [32]byte{}, map[peer.ID]float64{m: 1})
	x2, _ := nodetest.EpochRecord(t, key, 5, prevID, map[peer.ID]float64{m: 1})
	y2, idy2 := nodetest.EpochRecord(t, key, 5, prevID, map[peer.ID]float64{m: 0.5})
	next2, _ := nodetest.EpochRecord(t, key, 6, idy2, map[peer.ID]float64{m: 1})
	p2, _ := protocol.NewEquivocationProof(x2, y2)
	raw2, _ := proto.Marshal(p2)
	st = nodetest.MemStore(t)
	for _, r := range []signed{{4, v, prevRec}, {6, v, next2}} {
		if err := st.PutEpochRecord(r.e, []byte(r.v), r.raw); err != nil {
			t.Fatal(err)
		}
	}
	if rep := auditNow(); len(rep.Problems) != 1 {
		t.Fatalf("gap without the proof: %v", rep.Problems)
	}
	if _, err := st.PutEquivocation(5, []byte(v), raw2); err != nil {
		t.Fatal(err)
	}
	if rep := auditNow(); len(rep.Problems) != 0 {
		t.Fatalf("gap covered by a proof: %v", rep.Problems)
	}
}

// A validator whose round stalls does not sign its epoch record late: the
// round is abandoned at the cutoff, unrecorded, and the record is stored
// before the epoch is final, so it counts on every node.
func TestStalledRoundDoesNotDelayEpochRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		cfg.Validator.Deadline = config.Duration{Duration: time.Minute} // the stall would hold the epoch open far past finality
		type stored struct {
			epoch uint64
			at    time.Time
		}
		own := make(chan stored, 64)
		key, id := nodetest.Key(t)
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key = key
			o.OnEpochRecord = func(e uint64, by peer.ID) {
				if by == id {
					own <- stored{e, time.Now()}
				}
			}
		})
		started := make(chan struct{}, 1)
		m := tn.start(RoleMiner, cfg, stallingBackend{started: started})
		tn.connect(m, v)
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("miner never received a challenge")
		}
		stalled := v.view.epochAt(time.Now())
		deadline := time.After(60 * time.Second)
		for seen := 0; seen < 2; {
			select {
			case r := <-own:
				if r.epoch < stalled {
					continue
				}
				if at := epoch.FinalAt(r.epoch, cfg.Network.FinalityEpochs, cfg.Network.EpochLength.Duration); !r.at.Before(at) {
					t.Fatalf("record for epoch %d stored %v after the epoch was final", r.epoch, r.at.Sub(at))
				}
				seen++
			case r := <-tn.records:
				t.Fatalf("stalled round stored as evidence: %v %q", r.Verdict, r.Reason)
			case <-deadline:
				t.Fatal("no epoch record while a round stalled")
			}
		}
	})
}

// A validator whose epoch close overruns the next epoch still closes that
// epoch: every epoch gets a record and a checkpoint, which pruning and
// audit rely on.
func TestSlowEpochCloseSkipsNoEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Second}
		length := cfg.Network.EpochLength.Duration
		own := make(chan uint64, 64)
		key, id := nodetest.Key(t)
		var slowed bool
		_, st := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key = key
			o.Adversary.AlterEpochRecord = func(r *pb.EpochRecord) {
				if !slowed { // the first close ends after the next epoch has
					slowed = true
					time.Sleep(time.Until(time.Unix(0, int64(r.Epoch+2)*int64(length)).Add(length / 4)))
				}
			}
			o.OnEpochRecord = func(e uint64, by peer.ID) {
				if by == id {
					own <- e
				}
			}
		})
		var got []uint64
		deadline := time.After(30 * time.Second)
		for len(got) < 4 {
			select {
			case e := <-own:
				got = append(got, e)
			case <-deadline:
				t.Fatalf("records for epochs %v only", got)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]+1 {
				t.Fatalf("record epochs %v: an epoch was skipped", got)
			}
		}
		for _, e := range got {
			if cp, found, err := st.LatestCheckpoint([]byte(id), e+1); err != nil || !found || cp.Epoch != e {
				t.Fatalf("no checkpoint at epoch %d: %v", e, err)
			}
		}
	})
}
