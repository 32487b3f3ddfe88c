package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol"
)

// TestAnnounceReachesLateValidator: a miner relays no announces, so one it
// published before a validator connected never reaches it; it announces
// again as the validator joins the topic, not an announce interval later.
func TestAnnounceReachesLateValidator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Miner.AnnounceInterval = config.Duration{Duration: time.Hour}
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		time.Sleep(time.Minute) // its first announce has gone to nobody
		heard := make(chan time.Time, 16)
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.OnGossip = func(topic string, op *protocol.Opened, at time.Time) {
				if topic == protocol.TopicAnnounce && op.Author == m.ID() {
					heard <- at
				}
			}
		})
		connected := time.Now()
		tn.connect(m, v)
		select {
		case at := <-heard:
			if d := at.Sub(connected); d > time.Second {
				t.Fatalf("the announce reached the validator %v after it connected", d)
			}
		case <-time.After(cfg.Miner.AnnounceInterval.Duration / 2):
			t.Fatal("no announce within half an announce interval of the validator connecting")
		}
	})
}

// TestResubscribingPromptsFewAnnounces: a peer that may challenge the miner
// and toggles its announce-topic subscription 50 times in 10 s prompts at
// most one announce a ReannounceGap, which every validator receives.
func TestResubscribingPromptsFewAnnounces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Miner.AnnounceInterval = config.Duration{Duration: time.Hour}
		heard := make(chan time.Time, 256)
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.OnGossip = func(topic string, op *protocol.Opened, at time.Time) {
				if topic == protocol.TopicAnnounce && op.Author == m.ID() {
					heard <- at
				}
			}
		})
		tn.connect(m, v)
		time.Sleep(time.Minute)
		for len(heard) > 0 {
			<-heard // the announces of the validator's own joining
		}

		key, _ := nodetest.Key(t)
		ncfg := cfg.Node
		var transport []libp2p.Option
		ncfg.Listen = make([]string, 1)
		ncfg.Listen[0], transport = tn.simEndpoint()
		h, err := newHost(key, ncfg, transport...)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		ps, err := newPubSub(tn.ctx, h, nil, func(peer.ID) float64 { return 0 })
		if err != nil {
			t.Fatal(err)
		}
		topic, err := ps.Join(protocol.TopicAnnounce)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Connect(tn.ctx, peer.AddrInfo{ID: m.ID(), Addrs: m.host.Addrs()}); err != nil {
			t.Fatal(err)
		}
		const toggles, over = 50, 10 * time.Second
		start := time.Now()
		for range toggles {
			sub, err := topic.Subscribe()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(over / toggles / 2)
			sub.Cancel()
			time.Sleep(over / toggles / 2)
		}
		time.Sleep(miner.ReannounceGap)
		most := int(time.Since(start)/miner.ReannounceGap) + 1
		if n := len(heard); n == 0 || n > most {
			t.Fatalf("%d subscriptions in %v prompted %d announces; want 1 to %d", toggles, over, n, most)
		}
	})
}
