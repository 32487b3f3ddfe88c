package node

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record"
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
		cfg.Network.EpochLength = Duration{2 * time.Second}
		type ev struct {
			e uint64
			v peer.ID
		}
		events := make(chan ev, 256)
		honest, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.OnEpochRecord = func(e uint64, v peer.ID) { events <- ev{e, v} }
		})
		dishonest, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.AlterEpochRecord = func(r *pb.EpochRecord) {
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
		opts := PeerAuditOptions{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Log: testLogger(t)}
		ctx := t.Context()

		rep, err := PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || len(rep.Unfetched) > 0 {
			t.Fatalf("honest validator: problems %v, unfetched %v", rep.Problems, rep.Unfetched)
		}
		if len(rep.Audited) != 1 || rep.Recomputed < 2 || rep.ProofsVerified == 0 || rep.EvidenceEpochs < 2 {
			t.Fatalf("honest validator: audit checked too little: %+v %+v", rep, *rep.AuditReport)
		}

		// Pruned below first+1, it still audits clean: the earlier records
		// are checked without their evidence, and the later ones recomputed
		// from its checkpoint of first, which the auditor fetches. Without
		// that checkpoint the audit says so.
		if err := honest.store.PruneEvidence(first + 1); err != nil {
			t.Fatal(err)
		}
		rep, err = PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 0 || len(rep.Unfetched) > 0 || len(rep.Audited) != 1 || rep.PrunedBelow[honest.ID().String()] != first+1 ||
			rep.Pruned == 0 || rep.Recomputed == 0 {
			t.Fatalf("pruned honest validator: %+v %+v", rep, *rep.AuditReport)
		}
		key := binary.BigEndian.AppendUint64([]byte{'c'}, first)
		if err := honest.store.Tamper(func(db *pebble.DB) error { return db.Delete(append(key, honest.ID()...), pebble.Sync) }); err != nil {
			t.Fatal(err)
		}
		if rep, err = PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts); err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "no scorer checkpoint") {
			t.Fatalf("pruned validator without its checkpoint: problems %v", rep.Problems)
		}

		rep, err = PeerAudit(ctx, tn.auditHost(dishonest), dishonest.ID(), opts)
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

		rep, err = PeerAudit(ctx, tn.auditHost(miner), miner.ID(), opts)
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
		if rep, err = PeerAudit(ctx, tn.auditHost(honest), honest.ID(), opts); err != nil {
			t.Fatal(err)
		}
		if len(rep.Audited) > 0 || len(rep.Unfetched) != 1 || !strings.Contains(rep.Unfetched[0], "pruned the evidence of every epoch") {
			t.Fatalf("fully pruned validator: audited %v, unfetched %v", rep.Audited, rep.Unfetched)
		}
	})
}

// TestFetchEvidenceRefusesBadData: a peer answering the evidence protocol
// with malformed, oversized, foreign or disordered data is caught as a bad
// peer, and one that keeps no evidence as ErrNoEvidence.
func TestFetchEvidenceRefusesBadData(t *testing.T) {
	server, err := NewAuditHost()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if err := server.Network().Listen(mustAddr(t, "/ip4/127.0.0.1/tcp/0")); err != nil {
		t.Fatal(err)
	}
	const e = 7
	rec := func(v peer.ID, epoch, round uint64) []byte {
		return record.EncodeRound(&store.RoundRecord{Epoch: epoch, Round: round, Miner: []byte{1}, Validator: []byte(v),
			Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"})
	}
	header := func(status byte, n, next uint32) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{status}, n), next)
	}
	me := server.ID()
	cp, _ := store.EncodeCheckpointState(map[string]float64{"m": 0.5})
	cases := []struct {
		name       string
		frames     [][]byte
		raw        []byte // written after the frames
		bad        bool
		none       bool
		checkpoint bool // FetchCheckpoint's request, not FetchEvidence's
	}{
		{"not a validator", [][]byte{header(evidenceNone, 0, 0)}, nil, false, true, false},
		{"pruned", [][]byte{header(evidencePruned, 0, 0)}, nil, false, true, false},
		{"unknown status", [][]byte{header(9, 0, 0)}, nil, true, false, false},
		{"too many items", [][]byte{header(evidenceOK, maxEvidenceItems+1, 0)}, nil, true, false, false},
		{"next not after the page", [][]byte{header(evidenceOK, 1, 5), rec(me, e, 1)}, nil, true, false, false},
		{"garbage record", [][]byte{header(evidenceOK, 1, 0), {1, 2, 3}}, nil, true, false, false},
		{"another validator's record", [][]byte{header(evidenceOK, 1, 0), rec("other", e, 1)}, nil, true, false, false},
		{"another epoch's record", [][]byte{header(evidenceOK, 1, 0), rec(me, e+1, 1)}, nil, true, false, false},
		{"records out of order", [][]byte{header(evidenceOK, 2, 0), rec(me, e, 2), rec(me, e, 1)}, nil, true, false, false},
		{"frame over the bound", [][]byte{header(evidenceOK, 1, 0)}, binary.AppendUvarint(nil, store.MaxRoundLen+1), true, false, false},
		{"trailing data", [][]byte{header(evidenceOK, 0, 0)}, []byte{0}, true, false, false},
		{"checkpoint: not canonical", [][]byte{header(evidenceOK, 1, 0), append(slices.Clone(cp), 0)}, nil, true, false, true},
		{"checkpoint: two of one epoch", [][]byte{header(evidenceOK, 2, 0), cp, cp}, nil, true, false, true},
		{"checkpoint: paged", [][]byte{header(evidenceOK, 1, 1), cp}, nil, true, false, true},
		{"checkpoint: pruned", [][]byte{header(evidencePruned, 0, 0)}, nil, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server.SetStreamHandler(EvidenceProtocol, func(s network.Stream) {
				defer s.Close()
				protocol.ReadFrame(bufio.NewReader(s), evidenceRequestLen)
				w := bufio.NewWriter(s)
				for _, f := range c.frames {
					protocol.WriteFrame(w, f)
				}
				w.Write(c.raw)
				w.Flush()
			})
			client, err := NewAuditHost()
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if err := client.Connect(context.Background(), peer.AddrInfo{ID: me, Addrs: server.Addrs()}); err != nil {
				t.Fatal(err)
			}
			if c.checkpoint {
				_, _, err = FetchCheckpoint(context.Background(), client, me, e)
			} else {
				_, err = FetchEvidence(context.Background(), client, me, e)
			}
			if errors.Is(err, errBadPeer) != c.bad || errors.Is(err, ErrNoEvidence) != c.none {
				t.Fatalf("got %v; want bad peer %v, no evidence %v", err, c.bad, c.none)
			}
		})
	}
}

func mustAddr(t *testing.T, s string) ma.Multiaddr {
	t.Helper()
	a, err := ma.NewMultiaddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEvidencePages: a validator's epoch of more rounds than one response
// carries comes whole, in store order, over several requests; a node that
// is no validator serves none.
func TestEvidencePages(t *testing.T) {
	server, err := NewAuditHost()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if err := server.Network().Listen(mustAddr(t, "/ip4/127.0.0.1/tcp/0")); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open("db", store.Options{FS: memFS()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const e, n = 3, 2*maxEvidenceItems + 5
	for i := range n {
		r := &store.RoundRecord{Epoch: e, Round: uint64(i + 1), Miner: []byte{1}, Validator: []byte(server.ID()),
			Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"}
		if err := st.PutRound(r); err != nil {
			t.Fatal(err)
		}
	}
	other := &store.RoundRecord{Epoch: e, Round: 1, Miner: []byte{2}, Validator: []byte("someone else"),
		Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"}
	if err := st.PutRound(other); err != nil {
		t.Fatal(err)
	}
	y := newSyncer(server, st, testLogger(t), func(peer.ID) bool { return true }, func() uint64 { return e }, nil)
	y.ownEvidence = true
	server.SetStreamHandler(EvidenceProtocol, y.serveEvidence)
	client, err := NewAuditHost()
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Connect(context.Background(), peer.AddrInfo{ID: server.ID(), Addrs: server.Addrs()}); err != nil {
		t.Fatal(err)
	}
	ev, err := FetchEvidence(context.Background(), client, server.ID(), e)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Rounds) != n {
		t.Fatalf("%d rounds fetched, want %d", len(ev.Rounds), n)
	}
	for i, r := range ev.Rounds {
		if r.Round != uint64(i+1) {
			t.Fatalf("round %d fetched at position %d", r.Round, i)
		}
	}
	y.ownEvidence = false
	if _, err := FetchEvidence(context.Background(), client, server.ID(), e); !errors.Is(err, ErrNoEvidence) {
		t.Fatalf("a non-validator served evidence: %v", err)
	}
}
