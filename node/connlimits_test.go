package node

import (
	"testing"

	"github.com/libp2p/go-libp2p"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	"github.com/pog-network/pog/node/config"
)

// TestConnLimitsHoldMaxMiners: a validator's connection manager keeps a
// connection to each miner it may schedule and to every validator, and
// the resource manager admits that many, inbound too, whatever libp2p's
// memory scaling gives: at 300 miners the 256 inbound connections of a
// 24 GB machine left 48 miners unconnected.
func TestConnLimitsHoldMaxMiners(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Network.Validators = make([]string, 16)
	low, high := connWatermarks(RoleValidator, cfg)
	if want := cfg.Validator.MaxMiners + 16; low < want || high < low {
		t.Errorf("validator watermarks %d/%d, want low ≥ %d ≤ high", low, high, want)
	}
	if l, h := connWatermarks(RoleMiner, cfg); l != cfg.Node.LowWater || h != cfg.Node.HighWater {
		t.Errorf("miner watermarks %d/%d, want the configured %d/%d", l, h, cfg.Node.LowWater, cfg.Node.HighWater)
	}
	small := rcmgr.DefaultLimits.Scale(1<<30, 1024) // 1 GiB for libp2p: 128 inbound
	sys := fitLimits(small, high).ToPartialLimitConfig().System
	for name, v := range map[string]rcmgr.LimitVal{"conns": sys.Conns, "inbound": sys.ConnsInbound, "outbound": sys.ConnsOutbound} {
		if int(v) < high {
			t.Errorf("system %s limit %d below the connection manager's high water %d", name, v, high)
		}
	}
	if before := small.ToPartialLimitConfig().System.ConnsInbound; int(before) >= high {
		t.Fatalf("the unscaled inbound limit %d already holds %d: the test shows nothing", before, high)
	}
	unlimited := rcmgr.InfiniteLimits
	if got := fitLimits(unlimited, high).ToPartialLimitConfig().System.Conns; got != rcmgr.Unlimited {
		t.Errorf("an unlimited system limit became %d", got)
	}
}

// TestStreamLimitsHoldEveryPeer: every peer the connection manager keeps
// may hold its identify, ping and GossipSub streams at once, however
// libp2p scaled the limits. With 252 inbound identify streams (24 GB),
// identify failed for some of 300 miners connecting at once, GossipSub
// never added them as peers, and their validators dropped every record
// published to them (node.GossipDrops; BENCHMARKS.md).
func TestStreamLimitsHoldEveryPeer(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Network.Validators = make([]string, 16)
	_, high := connWatermarks(RoleValidator, cfg)
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	small := limits.Scale(1<<30, 1024)
	scopes := func(p rcmgr.PartialLimitConfig) map[string]rcmgr.ResourceLimits {
		return map[string]rcmgr.ResourceLimits{"system": p.System, "transient": p.Transient, "protocol default": p.ProtocolDefault,
			"identify service": p.Service[identify.ServiceName], "identify": p.Protocol[identify.ID],
			"identify push": p.Protocol[identify.IDPush], "ping service": p.Service[ping.ServiceName], "ping": p.Protocol[ping.ID]}
	}
	if before := scopes(small.ToPartialLimitConfig())["identify service"].StreamsInbound; int(before) >= high {
		t.Fatalf("the unscaled identify limit %d already holds %d: the test shows nothing", before, high)
	}
	for name, l := range scopes(fitLimits(small, high).ToPartialLimitConfig()) {
		if int(l.StreamsInbound) < high || int(l.StreamsOutbound) < high || int(l.Streams) < 2*high {
			t.Errorf("%s stream limits %d in, %d out, %d in all: below %d peers' streams", name, l.StreamsInbound, l.StreamsOutbound, l.Streams, high)
		}
	}
}
