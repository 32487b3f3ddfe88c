package node

import (
	"context"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/proof/host/memwalk"
)

// newValidator is the validator role of n, reaching the node through its
// Env.
func newValidator(n *Node, o Options) *validator.Validator {
	return validator.New(validator.Env{
		Host: n.host, Key: n.key, Log: n.log, Config: n.cfg, Scoring: n.scoring, Store: o.Store, Stakes: o.Stakes,
		WG: &n.wg, EpochAt: n.view.epochAt, OtherRoot: n.view.otherRoot,
		Publish: n.publish,
		PublishRaw: func(ctx context.Context, topic string, raw []byte) error {
			return n.topics[topic].Publish(ctx, raw)
		},
		RAMEpoch: n.ramEpoch, ChallengeEvery: challengeEvery, CheckCPU: o.CheckCPU,
		OnRecord: n.obs.onRecord(o.OnRecord), OnHost: o.OnHost, EpochScores: o.Metrics.EpochScores,
		EpochClosed: n.obs.epochClosed, AlterRecord: n.alterRec,
	})
}

// ramEpoch is the RAM epoch in force at epoch e: period ⌊e ÷ P⌋'s.
func (n *Node) ramEpoch(e uint64) (memwalk.Epoch, error) {
	re := plan.PeriodEpoch(n.cfg.Network, e/max(1, n.cfg.Network.RAMPeriodEpochs))
	return re, re.Validate()
}

// acceptsChallenges reports whether p may challenge this node.
func (v *view) acceptsChallenges(p peer.ID) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.trustAny || v.validators[p]
}
