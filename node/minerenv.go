package node

import (
	"context"
	"errors"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

// newMiner is the miner role of n, reaching the node through its Env.
func newMiner(n *Node, o Options) *miner.Miner {
	c := o.Config
	hooks := o.Adversary.Miner
	hooks.PongDelay, hooks.AlterAnnounce = o.Adversary.PongDelay, o.Adversary.AlterAnnounce
	return miner.New(miner.Env{
		Host: n.host, Key: n.key, Log: n.log, Backend: o.Backend, Gossip: minerGossip{n},
		Config: miner.Config{Workers: c.Miner.Workers, MaxOutputBytes: c.Miner.MaxOutputBytes,
			AnnounceInterval: c.Miner.AnnounceInterval.Duration, QueueLength: c.Miner.QueueLength,
			ProofWindow: c.Miner.ProofWindow.Duration, RAMBytes: c.Miner.RAMBytes,
			ProofTimeout: c.Validator.ProofTimeout.Duration, EpochLength: c.Network.EpochLength.Duration, Plan: c.Validator},
		RAMEpoch: n.ramEpoch,
		Observe: func(at time.Time, validator peer.ID, c *pb.Challenge) {
			// A miner hears no challenge gossip (Node.relays): a peer
			// whose challenge it admitted is a validator, whose
			// connection the connection manager must keep.
			n.host.ConnManager().Protect(validator, "validator")
			n.obs.gossip(at, validator, c, nil)
		},
		Hooks:    hooks,
		Hardware: o.Hardware, GPUs: o.GPUs, Plot: o.Plot,
	})
}

// minerGossip is the node's gossip as its miner sees it (miner.Gossip).
type minerGossip struct{ n *Node }

func (g minerGossip) Publish(ctx context.Context, topic string, msg proto.Message) ([]byte, error) {
	return g.n.publish(ctx, topic, msg)
}

func (g minerGossip) Listeners(ctx context.Context, topic string) (<-chan struct{}, error) {
	h, err := g.n.topics[topic].EventHandler()
	if err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	go func() {
		defer h.Cancel()
		for {
			e, err := h.NextPeerEvent(ctx)
			if err != nil {
				return
			}
			// Only a peer that may challenge this miner is worth an
			// announce: any other could prompt them by resubscribing.
			if e.Type == pubsub.PeerJoin && g.n.view.acceptsChallenges(e.Peer) {
				select {
				case out <- struct{}{}:
				default: // one signal pending is enough
				}
			}
		}
	}()
	return out, nil
}

// Admit finds the challenge in the view, or first checks and adds it there
// as gossip would.
func (g minerGossip) Admit(o *protocol.Opened) (*miner.Challenge, error) {
	c, _, d := g.n.view.openChallenge(o, time.Now())
	if c == nil {
		return nil, errors.New(d.reason)
	}
	return &miner.Challenge{ID: c.id, Validator: c.validator, Miner: c.miner, Msg: c.msg, Params: c.params}, nil
}

func (g minerGossip) AcceptsChallenges(p peer.ID) bool { return g.n.view.acceptsChallenges(p) }

func (g minerGossip) SlotOpens(validator peer.ID, gpu bool, now time.Time) bool {
	r := g.n.view.slots
	return r == nil || r.Opens(g.n.ID(), validator, gpu, now)
}

func (g minerGossip) HostOpens(validator peer.ID, now time.Time) bool {
	r := g.n.view.slots
	return r == nil || r.HostOpens(validator, now)
}

func (g minerGossip) OffSchedule(validator peer.ID) uint64 {
	return g.n.view.offScheduleCount(validator)
}

func (g minerGossip) KeepOffSchedule(raw []byte, from peer.ID, at time.Time) error {
	return g.n.keepOffSchedule(raw, from, at)
}

func (g minerGossip) EpochAt(t time.Time) uint64 { return g.n.view.epochAt(t) }
