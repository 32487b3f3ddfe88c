package node

import (
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/pog-network/pog/node/metrics"
)

// GossipDrops counts gossip this node lost without a verdict on it: an RPC
// to a peer dropped (its send queue full or gone), a message its own
// reader was too slow to take, a message refused before validation (the
// validation queue full or throttled). Each loses a message silently:
// record sync repairs epoch records, nothing repairs the rest.
type GossipDrops struct {
	RPCsToValidators uint64 // outbound RPCs to validators dropped
	RPCsToOthers     uint64 // outbound RPCs to other peers dropped
	SlowReader       uint64 // validated messages this node's subscription missed
	NotValidated     uint64 // messages refused before validation
}

// dropTracer is the pubsub tracer behind GossipDrops and
// pog_gossip_dropped_total; every other event is ignored.
type dropTracer struct {
	metrics                                          *metrics.Metrics
	isValidator                                      func(peer.ID) bool
	toValidators, toOthers, slowReader, notValidated atomic.Uint64
}

func (t *dropTracer) drops() GossipDrops {
	return GossipDrops{RPCsToValidators: t.toValidators.Load(), RPCsToOthers: t.toOthers.Load(),
		SlowReader: t.slowReader.Load(), NotValidated: t.notValidated.Load()}
}

func (t *dropTracer) DropRPC(_ *pubsub.RPC, p peer.ID) {
	if t.isValidator(p) {
		t.toValidators.Add(1)
		t.metrics.GossipDropped("rpc_to_validator")
		return
	}
	t.toOthers.Add(1)
	t.metrics.GossipDropped("rpc_to_other")
}

func (t *dropTracer) UndeliverableMessage(*pubsub.Message) {
	t.slowReader.Add(1)
	t.metrics.GossipDropped("slow_reader")
}

func (t *dropTracer) RejectMessage(_ *pubsub.Message, reason string) {
	if reason == pubsub.RejectValidationQueueFull || reason == pubsub.RejectValidationThrottled {
		t.notValidated.Add(1)
		t.metrics.GossipDropped("not_validated")
	}
}

func (*dropTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*dropTracer) OnClosedOutboundStream(peer.ID)                       {}
func (*dropTracer) Join(string)                                          {}
func (*dropTracer) Leave(string)                                         {}
func (*dropTracer) Graft(peer.ID, string)                                {}
func (*dropTracer) Prune(peer.ID, string)                                {}
func (*dropTracer) ValidateMessage(*pubsub.Message)                      {}
func (*dropTracer) DeliverMessage(*pubsub.Message)                       {}
func (*dropTracer) DuplicateMessage(*pubsub.Message)                     {}
func (*dropTracer) ThrottlePeer(peer.ID)                                 {}
func (*dropTracer) RecvRPC(*pubsub.RPC)                                  {}
func (*dropTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*dropTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
