package node

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// auditHost is an auditor's host on tn's simulated network, connected to
// to. It listens, as a QUIC host on the simulated network must to dial.
func (tn *testNet) auditHost(to *Node) host.Host {
	tn.t.Helper()
	listen, transport := tn.simEndpoint()
	h, err := NewAuditHost(transport...)
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.t.Cleanup(func() { h.Close() })
	if err := h.Network().Listen(ma.StringCast(listen)); err != nil {
		tn.t.Fatal(err)
	}
	if err := h.Connect(tn.ctx, peer.AddrInfo{ID: to.ID(), Addrs: to.Host().Addrs()}); err != nil {
		tn.t.Fatal(err)
	}
	return h
}

// TestPeerAudit runs an honest validator, one that halves every weight it
// publishes (or, with none, misstates its rounds root), an honest and a
// lazy miner; an auditor with no store audits
// each over the network. The honest validator passes with its weights
// recomputed, the dishonest one's records are named, and a miner, which
// publishes no records, is reported as not fetched.
func TestPeerAudit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		type ev struct {
			e uint64
			v peer.ID
		}
		events := make(chan ev, 256)
		honest, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.OnEpochRecord = func(e uint64, v peer.ID) { events <- ev{e, v} }
		})
		dishonest, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Adversary.AlterEpochRecord = func(r *pb.EpochRecord) {
				changed := false
				for _, w := range r.Weights {
					changed = changed || w.Weight > 0
					w.Weight /= 2
				}
				if !changed { // an epoch without a verified round: claim other rounds
					r.RoundsRoot[0] ^= 1
				}
			}
		})
		miner := tn.start(RoleMiner, cfg, cpu.Backend{})
		lazy := tn.start(RoleMiner, cfg, lazyBackend{})
		for _, m := range []*Node{miner, lazy} {
			tn.connect(m, honest)
			tn.connect(m, dishonest)
		}
		tn.connect(honest, dishonest)
		// Two whole epochs closed by both validators, as the honest one holds them.
		first := honest.view.epochAt(time.Now()) + 1
		have := map[uint64]int{}
		for deadline := time.After(60 * time.Second); have[first+1] < 2; {
			select {
			case x := <-events:
				have[x.e]++
			case <-deadline:
				t.Fatalf("records of epochs %d and %d did not arrive: %v", first, first+1, have)
			}
		}
		opts := audit.PeerAuditOptions{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Log: testLogger(t)}
		ctx := t.Context()

		rep, err := audit.PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || len(rep.Unfetched) > 0 {
			t.Fatalf("honest validator: problems %v, unfetched %v", rep.Problems, rep.Unfetched)
		}
		if len(rep.Audited) != 1 || rep.Recomputed < 2 || rep.ProofsVerified == 0 || rep.EvidenceEpochs < 2 {
			t.Fatalf("honest validator: audit checked too little: %+v %+v", rep, *rep.Report)
		}

		// Pruned below first+1, it still audits clean: the earlier records
		// are checked without their evidence, and the later ones recomputed
		// from its checkpoint of first, which the auditor fetches. Without
		// that checkpoint the audit says so.
		if err := honest.store.PruneEvidence(first + 1); err != nil {
			t.Fatal(err)
		}
		rep, err = audit.PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || len(rep.Unfetched) > 0 || len(rep.Audited) != 1 || rep.PrunedBelow[honest.ID().String()] != first+1 ||
			rep.Pruned == 0 || rep.Recomputed == 0 {
			t.Fatalf("pruned honest validator: %+v %+v", rep, *rep.Report)
		}
		key := binary.BigEndian.AppendUint64([]byte{'c'}, first)
		if err := honest.store.Tamper(func(db *pebble.DB) error { return db.Delete(append(key, honest.ID()...), pebble.Sync) }); err != nil {
			t.Fatal(err)
		}
		if rep, err = audit.PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts); err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "no scorer checkpoint") {
			t.Fatalf("pruned validator without its checkpoint: problems %v", rep.Problems)
		}

		rep, err = audit.PeerAudit(ctx, tn.auditHost(dishonest), dishonest.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		named := 0
		for _, p := range rep.Problems {
			if strings.Contains(p, "epoch record") && strings.Contains(p, dishonest.ID().String()) &&
				(strings.Contains(p, "weights differ") || strings.Contains(p, "round evidence differs")) {
				named++
			}
		}
		if named < 2 {
			t.Fatalf("dishonest validator: %d bad records named, want at least 2: %v", named, rep.Problems)
		}

		rep, err = audit.PeerAudit(ctx, tn.auditHost(miner), miner.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || len(rep.Audited) > 0 || len(rep.Unfetched) != 1 || !strings.Contains(rep.Unfetched[0], "no epoch record") {
			t.Fatalf("miner: problems %v, audited %v, unfetched %v", rep.Problems, rep.Audited, rep.Unfetched)
		}

		// A validator that pruned every epoch it has records for is not
		// audited: there is nothing to recompute.
		if err := honest.store.PruneEvidence(honest.view.epochAt(time.Now()) + 100); err != nil {
			t.Fatal(err)
		}
		if rep, err = audit.PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts); err != nil {
			t.Fatal(err)
		}
		if len(rep.Audited) > 0 || len(rep.Unfetched) != 1 || !strings.Contains(rep.Unfetched[0], "pruned the evidence of every epoch") {
			t.Fatalf("fully pruned validator: audited %v, unfetched %v", rep.Audited, rep.Unfetched)
		}
	})
}

// TestPeerAuditOffSchedule audits a miner's kept off-schedule challenges
// (SPEC §16) over the network. While the listed validator without stake
// keeps to itself the audit names no one; once it challenges the miner
// off schedule the audit names it, as a problem when it is the audited
// validator and apart from the audit of the honest one otherwise. A kept
// challenge that was on schedule is the miner's fault.
func TestPeerAuditOffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		hk, hid := nodetest.Key(t)
		sk, sid := nodetest.Key(t)
		stakes := map[string]float64{hid.String(): 1, sid.String(): 0}
		records := make(chan uint64, 256) // epochs of the honest validator's records the miner stores
		var victim atomic.Pointer[peer.ID]
		start := func(role Role, key crypto.PrivKey, adjust func(*Options)) *Node {
			n, _ := tn.startWith(role, cfg, cpu.Backend{}, func(o *Options) {
				o.Stakes = stakes
				if key != nil {
					o.Key = key
				}
				if adjust != nil {
					adjust(o)
				}
			})
			return n
		}
		honest := start(RoleValidator, hk, nil)
		squatter := start(RoleValidator, sk, func(o *Options) {
			o.Adversary.Squat = func() []peer.ID {
				if p := victim.Load(); p != nil {
					return []peer.ID{*p}
				}
				return nil
			}
		})
		miner := start(RoleMiner, nil, func(o *Options) {
			o.OnEpochRecord = func(e uint64, v peer.ID) {
				if v == hid {
					records <- e
				}
			}
		})
		tn.connect(miner, honest)
		tn.connect(miner, squatter)
		tn.connect(honest, squatter)
		// recordsTo waits until the miner holds the honest validator's record of epoch e.
		recordsTo := func(e uint64) {
			for deadline := time.After(time.Minute); ; {
				select {
				case got := <-records:
					if got >= e {
						return
					}
				case <-deadline:
					t.Fatalf("the miner holds no record of epoch %d", e)
				}
			}
		}
		auditMiner := func(v peer.ID) *audit.PeerAuditReport {
			t.Helper()
			h := tn.auditHost(miner)
			for _, n := range []*Node{honest, squatter} {
				if err := h.Connect(tn.ctx, peer.AddrInfo{ID: n.ID(), Addrs: n.Host().Addrs()}); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := audit.PeerAudit(t.Context(), h, miner.ID(), audit.PeerAuditOptions{Validators: []peer.ID{v},
				Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Stakes: stakes, Log: testLogger(t),
				Slots: func(s map[string]float64) audit.SlotRule { return SlotRule(s, cfg) }})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}

		first := honest.view.epochAt(time.Now()) + 2
		recordsTo(first)
		rep := auditMiner(hid)
		if len(rep.Problems) > 0 || len(rep.OffSchedule) > 0 || len(rep.OffScheduleOthers) > 0 || rep.OffScheduleEpochs < 2 {
			t.Fatalf("no one off schedule: problems %v, named %+v and %+v in %d epochs", rep.Problems, rep.OffSchedule, rep.OffScheduleOthers, rep.OffScheduleEpochs)
		}

		id := miner.ID()
		victim.Store(&id)
		recordsTo(honest.view.epochAt(time.Now()) + 1)
		rep = auditMiner(hid)
		if len(rep.Problems) > 0 || len(rep.OffSchedule) > 0 || len(rep.OffScheduleOthers) != 1 ||
			rep.OffScheduleOthers[0].Signer != sid.String() || !rep.OffScheduleOthers[0].Unstaked || rep.OffScheduleOthers[0].Challenges == 0 {
			t.Fatalf("auditing the honest validator: problems %v, named %+v, others %+v", rep.Problems, rep.OffSchedule, rep.OffScheduleOthers)
		}
		rep = auditMiner(sid)
		named := slices.ContainsFunc(rep.Problems, func(p string) bool {
			return strings.Contains(p, "validator "+sid.String()+" challenged "+id.String()+" off schedule") && strings.Contains(p, "owns no slot")
		})
		if !named || len(rep.OffSchedule) != 1 || rep.OffSchedule[0].Signer != sid.String() || len(rep.OffScheduleOthers) > 0 {
			t.Fatalf("auditing the squatter: problems %v, named %+v, others %+v", rep.Problems, rep.OffSchedule, rep.OffScheduleOthers)
		}

		// The honest validator owns every slot: a challenge of its that the
		// miner says it kept off schedule is the miner's fault, not the
		// validator's.
		pp, err := (&proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(id)}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := protocol.Seal(hk, &pb.Challenge{Version: protocol.Version, Epoch: first, Round: 1, Miner: []byte(id), Params: [][]byte{pp},
			SecretCommitment: make([]byte, 32), Samples: 66, DeadlineMs: 5000, Steps: 4, FirstRootMs: 500})
		if err != nil {
			t.Fatal(err)
		}
		c, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(0, int64(first)*int64(cfg.Network.EpochLength.Duration)+1)
		if _, err := miner.store.PutOffSchedule(store.OffSchedule{Epoch: first, Signer: []byte(hid), ID: protocol.ID(c.Body), At: at.UnixNano(), Envelope: raw}); err != nil {
			t.Fatal(err)
		}
		rep = auditMiner(hid)
		if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "peer "+id.String()+" kept challenges that were inside their signer's opening window as off schedule (1; the first "+hid.String()) ||
			len(rep.OffSchedule) > 0 || len(rep.OffScheduleOthers) != 1 {
			t.Fatalf("a kept challenge on schedule: problems %v, named %+v, others %+v", rep.Problems, rep.OffSchedule, rep.OffScheduleOthers)
		}
	})
}
