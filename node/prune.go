package node

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
)

// finalityLoop freezes each epoch as it becomes final and prunes evidence
// past its retention, at every epoch boundary, until ctx ends.
func (n *Node) finalityLoop(ctx context.Context) {
	length := n.cfg.Network.EpochLength.Duration
	for {
		now := time.Now()
		if err := n.finality.Tick(now); err != nil {
			n.log.Error("finalising epochs failed", "err", err)
		}
		if err := n.prune(now); err != nil {
			n.log.Error("pruning evidence failed", "err", err)
		}
		next := time.Unix(0, (now.UnixNano()/int64(length)+1)*int64(length))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
	}
}

// prune deletes round evidence past the retention.
func (n *Node) prune(now time.Time) error {
	var v peer.ID
	if n.validator != nil {
		v = n.ID()
	}
	bound, ok, err := epoch.PruneBound(n.store, v, n.view.epochAt(now), n.cfg.Network.FinalityEpochs, n.cfg.Node.RetainEvidence)
	if err != nil || !ok {
		return err
	}
	return n.store.PruneEvidence(bound)
}
