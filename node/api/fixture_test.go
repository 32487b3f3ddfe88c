package api

import (
	"bytes"
	"sort"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// fixture is a validator's store with two miners' rounds in epochs 4 and 5
// and its epoch records for both, plus a live snapshot.
type fixture struct {
	st        *store.Store
	validator peer.ID
	miners    []peer.ID // sorted by bytes, as epoch records want
	snap      node.Snapshot
}

func (f *fixture) Snapshot() node.Snapshot { return f.snap }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	vkey, v := nodetest.Key(t)
	_, m1 := nodetest.Key(t)
	_, m2 := nodetest.Key(t)
	miners := []peer.ID{m1, m2}
	sort.Slice(miners, func(i, j int) bool { return bytes.Compare([]byte(miners[i]), []byte(miners[j])) < 0 })
	f := &fixture{st: st, validator: v, miners: miners}
	sent := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for e := uint64(4); e <= 5; e++ {
		for i, m := range miners {
			rec := &store.RoundRecord{Epoch: e, Round: e*10 + uint64(i), Miner: []byte(m), Validator: []byte(v),
				Challenge: []byte("challenge"), SentUnixNano: sent.Add(time.Duration(e) * time.Minute).UnixNano(),
				FLOPs: 1e9, Indices: []uint64{1, 2, 3}}
			if i == 0 {
				rec.Verdict, rec.Commitment, rec.CommitNanos, rec.VerifyNanos, rec.TFLOPS = store.VerdictVerified, []byte("commitment"), 5e6, 1e6, 2e-4
			} else {
				rec.Verdict, rec.Reason = store.VerdictFailed, "no commitment within 5s"
			}
			if err := st.PutRound(rec); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := protocol.Seal(vkey, &pb.EpochRecord{Version: protocol.Version, Epoch: e,
			Weights:    []*pb.MinerWeight{{Miner: []byte(miners[0]), Weight: 0.75}, {Miner: []byte(miners[1]), Weight: 0.25}},
			RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutEpochRecord(e, []byte(v), raw); err != nil {
			t.Fatal(err)
		}
	}
	f.snap = node.Snapshot{ID: v, Role: node.RoleValidator, Started: sent, Epoch: 5, EpochEnd: sent.Add(time.Hour),
		Listen:     []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + v.String()},
		Peers:      []node.PeerInfo{{ID: miners[0], Addr: "/ip4/127.0.0.1/tcp/4002", Score: 1.5}},
		Validators: []node.SeenValidator{{ID: v, LastSeen: sent, Connected: true}},
		Hardware:   &pb.Hardware{CpuCores: 8, CpuGhz: 3.5, RamBytes: 32 << 30},
		GPUs:       []*pb.GPU{{Name: "H100", Uuid: "GPU-1", MemoryBytes: 80 << 30}},
		Own:        &node.OwnWeight{Epoch: 5, Weight: 0.75, Incentive: 0.75, Validators: 1},
		Warnings:   []string{"no challenge received"},
		Challenges: []node.ReceivedChallenge{{Validator: v, Epoch: 5, Round: 50, At: sent}},
		Played:     playedRounds(v, sent),
		HostPlayed: []miner.PlayedHostRound{
			{Validator: v, At: sent.Add(4 * time.Minute), Kind: "cpu", Chains: 2, Steps: 1 << 12, Prove: 800 * time.Millisecond, RootBy: time.Second, Served: true},
			{Validator: v, At: sent.Add(5 * time.Minute), Kind: "ram", Chains: 1, Steps: 1 << 10, RootBy: time.Second, Error: "ram challenge for a dataset this miner does not hold"}}}
	return f
}

// playedRounds is what miners[0] heard of its rounds with v: the two
// verified rounds the store holds, then one that failed and one abandoned.
func playedRounds(v peer.ID, sent time.Time) []miner.PlayedRound {
	return []miner.PlayedRound{
		{Validator: v, Epoch: 4, Round: 40, Steps: 6, At: sent.Add(4 * time.Minute), Verdict: "verified", TFLOPS: 2e-4, Peak: 3e-4},
		{Validator: v, Epoch: 5, Round: 50, Steps: 6, At: sent.Add(5 * time.Minute), Verdict: "verified", TFLOPS: 2e-4, Peak: 2.5e-4},
		{Validator: v, Epoch: 5, Round: 52, Steps: 6, Probe: true, At: sent.Add(6 * time.Minute), Verdict: "failed", Reason: "tile 3 does not match its commitment"},
		{Validator: v, Epoch: 5, Round: 54, Steps: 6, At: sent.Add(7 * time.Minute), Verdict: "abandoned", Reason: "stream closed"},
	}
}

func openEmpty(t *testing.T) (*store.Store, error) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err == nil {
		t.Cleanup(func() { st.Close() })
	}
	return st, err
}
