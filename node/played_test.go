package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// TestMinerKeepsItsRounds: the rounds a miner lists are the ones its
// validator stored, with the same verdict and TFLOPS, and the host round it
// served is listed with the challenge's kind and shape.
func TestMinerKeepsItsRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Validator.HostCPUWindow = config.Duration{Duration: 20 * time.Millisecond}
		hosts := make(chan *store.HostRecord, 16)
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.OnHost = func(r *store.HostRecord) { hosts <- r } })
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Hardware = &pb.Hardware{CpuCores: 2} })
		tn.connect(m, v)
		var recs []*store.RoundRecord
		var host *store.HostRecord
		deadline := time.After(60 * time.Second)
		for host == nil || len(recs) == 0 {
			select {
			case r := <-tn.records:
				recs = append(recs, r)
			case host = <-hosts:
			case <-deadline:
				t.Fatalf("%d round records and host record %v within 60 s", len(recs), host)
			}
		}
		synctest.Wait() // the miner has handled every result it was sent
		snap := m.Snapshot()
		for _, r := range recs {
			checkPlayed(t, snap.Played, r)
		}
		ch, err := hostround.DecodeChallenge(host.Challenge)
		if err != nil {
			t.Fatal(err)
		}
		sh := ch.Proof.Dims()
		if i := playedHost(snap.HostPlayed, v.ID()); i < 0 || !snap.HostPlayed[i].Served || snap.HostPlayed[i].Kind != "cpu" ||
			snap.HostPlayed[i].Chains != sh.Chains || snap.HostPlayed[i].Steps != sh.Steps || snap.HostPlayed[i].RootBy != time.Duration(ch.RootByMs)*time.Millisecond {
			t.Fatalf("host round %d (challenge %+v), the miner's host rounds %+v", host.Round, ch, snap.HostPlayed)
		}
	})
}

func checkPlayed(t *testing.T, played []miner.PlayedRound, r *store.RoundRecord) {
	t.Helper()
	for _, p := range played {
		if p.Validator == peer.ID(r.Validator) && p.Epoch == r.Epoch && p.Round == r.Round {
			if p.Verdict != r.Verdict.String() || p.TFLOPS != r.TFLOPS || p.Peak != r.PeakTFLOPS || p.Reason != r.Reason {
				t.Errorf("round %d: the miner has %+v, the validator stored %v %q %v", r.Round, p, r.Verdict, r.Reason, r.TFLOPS)
			}
			return
		}
	}
	t.Errorf("round %d of epoch %d (%v) is not among the miner's %d rounds", r.Round, r.Epoch, r.Verdict, len(played))
}

func playedHost(hs []miner.PlayedHostRound, v peer.ID) int {
	for i, h := range hs {
		if h.Validator == v {
			return i
		}
	}
	return -1
}
