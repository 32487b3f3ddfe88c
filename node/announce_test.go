package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
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
