package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// TestRoundPlannedFromScoredAnnounce: scoring reads a miner's first stored
// announce of each epoch. A round the validator plans in an epoch before
// any announce of that epoch arrives is planned from the miner's latest,
// which is then stored as the epoch's, so the epoch is scored against the
// GPUs its rounds were planned from: before, memory-inflate announced more
// GPUs late in each epoch, was planned from them early in the next, and
// was scored against the next epoch's first announce.
func TestRoundPlannedFromScoredAnnounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Minute}
		cfg.Validator.MinerTTL = config.Duration{Duration: time.Hour}
		// Announces at 0 s (before it is connected: lost), as the
		// validator joins, at 50 s and at 100 s: the next epoch's first
		// 40 s have none.
		cfg.Miner.AnnounceInterval = config.Duration{Duration: 50 * time.Second}
		v, st := tn.startWith(RoleValidator, cfg, nil, nil)
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		first := v.view.epochAt(time.Now())
		for r := range tn.records {
			if r.Epoch > first && r.Verdict == store.VerdictVerified && peer.ID(r.Miner) == m.ID() {
				if r.SentUnixNano >= epoch.StartOf(r.Epoch, cfg.Network.EpochLength.Duration).Add(40*time.Second).UnixNano() {
					t.Fatalf("no round in epoch %d before its first announce", r.Epoch)
				}
				synctest.Wait()
				raw, err := st.Announce(r.Epoch, r.Miner)
				if err != nil {
					t.Fatalf("a round of epoch %d, which no announce reached, and no announce stored for it: %v", r.Epoch, err)
				}
				earlier, err := st.Announce(first, r.Miner)
				if err != nil {
					t.Fatal(err)
				}
				o, err := protocol.Open(raw, pb.MessageType_MINER_ANNOUNCE)
				if err != nil || o.Author != m.ID() {
					t.Fatalf("stored announce: %v", err)
				}
				e, err := protocol.Open(earlier, pb.MessageType_MINER_ANNOUNCE)
				if err != nil {
					t.Fatal(err)
				}
				// The 50 s announce, the latest before the round: later
				// than epoch first's first.
				if seq, was := o.Msg.(*pb.MinerAnnounce).Seq, e.Msg.(*pb.MinerAnnounce).Seq; seq <= was {
					t.Fatalf("epoch %d's stored announce (seq %d) is not the miner's latest: epoch %d's first is seq %d", r.Epoch, seq, first, was)
				}
				return
			}
		}
	})
}
