package testnet

import (
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/testnet/adversary"
)

// equivocatorName is the equivocator's node name (adversary.Equivocate).
const equivocatorName = "validator-equivocator"

// extraValidators lists the adversarial validators a run starts, by
// adversary class, in the order they join.
func (r *run) extraValidators() []string {
	var out []string
	for _, a := range []string{"dishonest-validator", "equivocator", "squatter", "beacon-split"} {
		if containsStr(r.cfg.Adversaries, a) {
			out = append(out, a)
		}
	}
	return out
}

// accompliceName is the miner the dishonest validator gives all its weight.
const accompliceName = "accomplice"

// accomplice is the accomplice's peer ID, once started; "" before.
func (r *run) accomplice() peer.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.memberNamed(accompliceName); m != nil {
		return m.id
	}
	return ""
}

func validatorName(adversary string) string {
	switch adversary {
	case "equivocator":
		return equivocatorName
	case "squatter":
		return squatterName
	case "beacon-split":
		return beaconSplitName
	}
	return "validator-dishonest"
}

// detectEquivocation records each proof against the equivocator that a
// node stored as the adversary's detection.
func (r *run) detectEquivocation(at float64) {
	if eq := r.memberNamed(equivocatorName); eq != nil {
		r.detections = append(r.detections, adversary.EquivocationFound(eq.id, r.holders(nil), at)...)
	}
}

// equivocatorIgnored checks that every node holds the proofs against the
// equivocator and ignores its stake in epoch last.
func (r *run) equivocatorIgnored(last uint64) (bool, string) {
	eq := r.memberNamed(equivocatorName)
	if eq == nil {
		return false, "no equivocator ran"
	}
	return adversary.EquivocatorIgnored(eq.id, r.holders(eq), last)
}

// holders are the members with a store, but except.
func (r *run) holders(except *member) []adversary.Holder {
	var out []adversary.Holder
	for _, m := range r.members {
		if m.store != nil && m != except {
			out = append(out, adversary.Holder{Name: m.info.Name, Store: m.store})
		}
	}
	return out
}

func (r *run) memberNamed(name string) *member {
	for _, m := range r.members {
		if m.info.Name == name {
			return m
		}
	}
	return nil
}
