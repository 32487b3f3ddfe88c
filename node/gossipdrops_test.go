package node

import (
	"testing"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/metrics"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Only losses without a verdict count: a validator's reject or ignore is
// a verdict (pog_gossip_messages_total), not a drop.
func TestDropTracerCountsLossesOnly(t *testing.T) {
	m := metrics.New()
	tr := &dropTracer{metrics: m, isValidator: func(p peer.ID) bool { return p == "v" }}
	tr.DropRPC(nil, "v")
	tr.DropRPC(nil, "m")
	tr.DropRPC(nil, "m")
	tr.UndeliverableMessage(nil)
	for _, reason := range []string{pubsub.RejectValidationQueueFull, pubsub.RejectValidationThrottled,
		pubsub.RejectValidationFailed, pubsub.RejectValidationIgnored, pubsub.RejectInvalidSignature} {
		tr.RejectMessage(nil, reason)
	}
	if got, want := tr.drops(), (GossipDrops{RPCsToValidators: 1, RPCsToOthers: 2, SlowReader: 1, NotValidated: 2}); got != want {
		t.Errorf("drops %+v, want %+v", got, want)
	}
	for where, want := range map[string]float64{"rpc_to_validator": 1, "rpc_to_other": 2, "slow_reader": 1, "not_validated": 2} {
		if got := testutil.ToFloat64(m.GossipDroppedCounter(where)); got != want {
			t.Errorf("pog_gossip_dropped_total{where=%q} = %v, want %v", where, got, want)
		}
	}
}
