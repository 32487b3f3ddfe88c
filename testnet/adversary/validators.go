package adversary

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/report"
)

// The adversarial validators: the dishonest validator signs weights its
// evidence does not support (SkewWeights); the equivocator publishes two
// different records for every epoch (Equivocate), and every node must end
// with the proof and ignore its stake; the squatter is a listed validator
// with no stake that challenges a miner off schedule, and its victim must
// earn as its honest twin does.

// SkewWeights is the dishonest validator: whatever its evidence says, it
// gives all weight to its accomplice (none if the record does not weigh
// it). Clipping holds that weight to the accomplice's consensus, so what
// it gains is the validator's share of every other miner's rank
// (AccompliceLimit).
func SkewWeights(rec *pb.EpochRecord, accomplice peer.ID) {
	for _, w := range rec.Weights {
		w.Weight = 0
		if peer.ID(w.Miner) == accomplice {
			w.Weight = 1
		}
	}
}

// AccompliceLimit is what a dishonest validator's accomplice earns against
// an honest miner of its hardware when honest validators of equal stake
// weigh both alike: the validator's stake share s is 1/(honest+1), its
// clipped weight adds s·C to the accomplice's rank while every other
// miner's loses s·C, so 1/(1 − s). Honest validators that weigh the same
// hardware differently let it lift the accomplice's median too, beyond
// this (SPEC.md §20): the testnet reports the gain, not enforcing it. With
// half the stake or more (one honest validator) it sets consensus itself.
func AccompliceLimit(honest int) float64 {
	if honest < 2 {
		return math.Inf(1)
	}
	return float64(honest+1) / float64(honest) // 1/(1 − s)
}

// Equivocate alters a copy of the equivocator's record into its second
// one: its weights reversed. Both flood the network, so which one a node
// stores first depends on arrival order.
func Equivocate(rec *pb.EpochRecord) {
	for i, j := 0, len(rec.Weights)-1; i < j; i, j = i+1, j-1 {
		rec.Weights[i].Weight, rec.Weights[j].Weight = rec.Weights[j].Weight, rec.Weights[i].Weight
	}
	rec.RoundsRoot = append([]byte{rec.RoundsRoot[0] ^ 1}, rec.RoundsRoot[1:]...) // always another record
}

// Holder is a node's store, as the checks on the adversarial validators
// read it.
type Holder struct {
	Name  string
	Store *store.Store
}

// EquivocationFound is, for each holder that stored a proof against
// validator eq, a detection at at seconds.
func EquivocationFound(eq peer.ID, hs []Holder, at float64) []report.Detection {
	var out []report.Detection
	for _, h := range hs {
		for q, err := range h.Store.Equivocations(0, ^uint64(0)) {
			if err == nil && string(q.Validator) == string(eq) {
				out = append(out, report.Detection{Adversary: "equivocator", Node: h.Name,
					Epoch: q.Epoch, Kind: "equivocation", Detail: "equivocation proof stored", AtSeconds: at})
				break
			}
		}
	}
	return out
}

// EquivocatorIgnored checks every holder: each epoch up to last in which
// it holds equivocator eq's record also has the proof, and eq neither
// counts nor has stake in last's consensus.
func EquivocatorIgnored(eq peer.ID, hs []Holder, last uint64) (bool, string) {
	var bad []string
	epochs := 0
	for _, h := range hs {
		for ent, err := range h.Store.EpochRecords(0, last) {
			if err != nil || string(ent.Validator) != string(eq) {
				continue
			}
			epochs++
			if ok, err := h.Store.HasEquivocation(ent.Epoch, ent.Validator); !ok || err != nil {
				bad = append(bad, fmt.Sprintf("%s has no proof for epoch %d", h.Name, ent.Epoch))
			}
		}
		res, err := epoch.Consensus(h.Store, last, nil, consensus.DefaultParams())
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", h.Name, err))
			continue
		}
		if i := slices.Index(res.Validators, eq.String()); i >= 0 && (res.Active[i] || res.Stake[i] != 0) {
			bad = append(bad, fmt.Sprintf("%s counts its stake in epoch %d", h.Name, last))
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

// squatBound is the least share of its twin's incentive the squatter's
// victim keeps.
const squatBound = 0.95

// SquatterCheck compares the mean incentive of victim, the miner the
// squatter challenged, with that of twin, an honest miner of its profile,
// and states what the squatter's miners gained: it controls none.
func SquatterCheck(s *report.Summary, victim, twin string) report.Check {
	name := fmt.Sprintf("the squatter's victim keeps ≥ %.2f of its honest incentive, and the squatter's miners gain nothing", squatBound)
	v, m := MeanIncentive(s, victim), MeanIncentive(s, twin)
	ratio := v / m
	var refused int
	for _, d := range s.Detections {
		if d.Adversary == "squatter" {
			refused++
		}
	}
	return report.Check{Name: name, OK: m > 0 && ratio >= squatBound,
		Detail: fmt.Sprintf("%s ÷ %s mean incentive %.4f ÷ %.4f = %.3f; the squatter controls no miner; %d nodes refused its off-schedule challenges",
			victim, twin, v, m, ratio, refused)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
