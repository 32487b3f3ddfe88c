package testnet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/testnet/report"
)

// The equivocator is a validator that publishes two different records for
// every epoch: its honest one, then one with its weights reversed. Both
// flood the network, so which one a node stores first depends on arrival
// order; every node must end with the proof and ignore its stake.
const equivocatorName = "validator-equivocator"

// equivocate alters a copy of the equivocator's record into its second one.
func equivocate(rec *pb.EpochRecord) {
	for i, j := 0, len(rec.Weights)-1; i < j; i, j = i+1, j-1 {
		rec.Weights[i].Weight, rec.Weights[j].Weight = rec.Weights[j].Weight, rec.Weights[i].Weight
	}
	rec.RoundsRoot = append([]byte{rec.RoundsRoot[0] ^ 1}, rec.RoundsRoot[1:]...) // always another record
}

// extraValidators lists the adversarial validators a run starts, by
// adversary class, in the order they join.
func (r *run) extraValidators() []string {
	var out []string
	for _, a := range []string{"dishonest-validator", "equivocator", "squatter"} {
		if containsStr(r.cfg.Adversaries, a) {
			out = append(out, a)
		}
	}
	return out
}

func validatorName(adversary string) string {
	switch adversary {
	case "equivocator":
		return equivocatorName
	case "squatter":
		return squatterName
	}
	return "validator-dishonest"
}

// detectEquivocation records the first proof against the equivocator that
// any node stored, as the adversary's detection.
func (r *run) detectEquivocation(at float64) {
	eq := r.memberNamed(equivocatorName)
	if eq == nil {
		return
	}
	for _, m := range r.members {
		if m.store == nil {
			continue
		}
		for q, err := range m.store.Equivocations(0, ^uint64(0)) {
			if err == nil && string(q.Validator) == string(eq.id) {
				r.detections = append(r.detections, report.Detection{Adversary: "equivocator", Node: m.info.Name,
					Epoch: q.Epoch, Kind: "equivocation", Detail: "equivocation proof stored", AtSeconds: at})
				break
			}
		}
	}
}

// equivocatorIgnored checks every node: each epoch up to last in which it
// holds the equivocator's record also has the proof, and the equivocator
// neither counts nor has stake in last's consensus.
func (r *run) equivocatorIgnored(last uint64) (bool, string) {
	eq := r.memberNamed(equivocatorName)
	if eq == nil {
		return false, "no equivocator ran"
	}
	var bad []string
	epochs := 0
	for _, m := range r.members {
		if m.store == nil || m == eq {
			continue
		}
		for ent, err := range m.store.EpochRecords(0, last) {
			if err != nil || string(ent.Validator) != string(eq.id) {
				continue
			}
			epochs++
			if ok, err := m.store.HasEquivocation(ent.Epoch, ent.Validator); !ok || err != nil {
				bad = append(bad, fmt.Sprintf("%s has no proof for epoch %d", m.info.Name, ent.Epoch))
			}
		}
		res, err := node.Consensus(m.store, last, nil, consensus.DefaultParams())
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", m.info.Name, err))
			continue
		}
		if i := slices.Index(res.Validators, eq.id.String()); i >= 0 && (res.Active[i] || res.Stake[i] != 0) {
			bad = append(bad, fmt.Sprintf("%s counts its stake in epoch %d", m.info.Name, last))
		}
	}
	if epochs == 0 {
		return false, "no node holds a record of the equivocator"
	}
	if len(bad) > 0 {
		return false, truncate(strings.Join(bad, "; "), 300)
	}
	return true, fmt.Sprintf("proven in all %d (node, epoch) records held; stake ignored in epoch %d on every node", epochs, last)
}

func (r *run) memberNamed(name string) *member {
	for _, m := range r.members {
		if m.info.Name == name {
			return m
		}
	}
	return nil
}
