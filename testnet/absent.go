package testnet

import (
	"context"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/testnet/report"
)

// setPresence notes the absent miner's presence in the summarised epochs
// [from, to], the share of a full-time peer it is owed (adversary.Profitability).
func (r *run) setPresence(s *report.Summary, from, to uint64) {
	if r.absence == nil {
		return
	}
	for i := range s.Nodes {
		if s.Nodes[i].Adversary == "absent" {
			s.Nodes[i].Presence = r.absence.Presence(from, to)
		}
	}
}

// startAbsence connects the absent miner m to the miners already up, for
// gossip, and keeps its validator windows until the run ends.
func (r *run) startAbsence(ctx context.Context, m *member, validators []*member) error {
	for _, o := range r.members {
		if o != m && o.node != nil && o.info.Role == "miner" {
			if err := m.node.Connect(ctx, o.node.Addrs()...); err != nil {
				return err
			}
		}
	}
	addrs := map[peer.ID][]string{}
	for _, v := range validators {
		addrs[v.id] = v.node.Addrs()
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.absence.Keep(ctx, m.node, addrs)
	}()
	return nil
}
