package testnet

import (
	"fmt"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/testnet/report"
)

// The squatter is a listed validator with no stake: it owns no slot, yet
// challenges the squatted miner (an honest twin of miner-1) off schedule,
// holding its host lock and a queue place. Honest owners' rounds with the
// victim must not miss for it (SPEC.md §16), so the victim earns as its
// twin does (adversary.SquatterCheck).
const (
	squatterName = "validator-squatter"
	victimName   = "squatted"
)

// stakes are every node's genesis stakes when a squatter runs: each listed
// validator 1, the squatter 0; nil otherwise (network.validators at stake
// 1, or no set).
func (r *run) stakes() map[string]float64 {
	if !containsStr(r.cfg.Adversaries, "squatter") || len(r.validatorIDs) == 0 {
		return nil
	}
	key, err := config.LoadKey(filepath.Join(r.cfg.Out, "nodes", squatterName))
	if err != nil {
		return nil
	}
	sq, _ := peer.IDFromPrivateKey(key)
	out := map[string]float64{}
	for _, v := range r.validatorIDs {
		out[v] = 1
	}
	out[sq.String()] = 0
	return out
}

// squatVictims is whom the squatter challenges: the victim, once started.
func (r *run) squatVictims() []peer.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.memberNamed(victimName); m != nil {
		return []peer.ID{m.id}
	}
	return nil
}

// detectSquatter records, for each node that refused or dropped the
// squatter's off-schedule challenges, how many.
func (r *run) detectSquatter(at float64) {
	sq := r.memberNamed(squatterName)
	if sq == nil {
		return
	}
	for _, m := range r.members {
		if m.node == nil {
			continue
		}
		if c := m.node.OffSchedule()[sq.id]; c > 0 {
			r.detections = append(r.detections, report.Detection{Adversary: "squatter", Node: m.info.Name, Kind: "off-schedule",
				Detail: fmt.Sprintf("%d challenges or round streams refused as off schedule", c), AtSeconds: at})
		}
	}
}
