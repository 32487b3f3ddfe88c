package testnet

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// summarise recomputes epochs [from, to] from the nodes' stores, audits
// every validator's store and checks the run's expectations.
func (r *run) summarise(from, to uint64) (*report.Summary, error) {
	defer r.closeStores()
	s := &report.Summary{Seed: r.cfg.Seed, EpochLength: r.cfg.EpochLength.String(), Rounds: r.rounds,
		DurationSeconds: time.Since(r.start).Seconds(), StartedAt: r.start.UTC().Format(time.RFC3339Nano), Scale: r.cfg.Scale,
		HostScale: r.hostScaleNote(), Simulated: r.cfg.Sim, WallSeconds: (wallNow() - r.wallStart).Seconds()}
	var validators, miners []*member
	for _, m := range r.members {
		s.Nodes = append(s.Nodes, m.info)
		switch m.info.Role {
		case string(node.RoleValidator):
			validators = append(validators, m)
			s.Validators++
		case string(node.RoleMiner):
			miners = append(miners, m)
			s.Miners++
		}
	}
	name := func(id string) string {
		p, err := peer.Decode(id)
		if m := r.byID[p]; err == nil && m != nil {
			return m.info.Name
		}
		return id
	}
	sc := r.scoringConfig()
	scorers := map[*member]*node.EpochScorer{}
	for _, v := range validators {
		scorers[v] = &node.EpochScorer{Store: v.store, Validator: v.id, Config: sc}
	}
	flagged := map[string]bool{}
	missing := map[string][]uint64{} // node → epochs whose records it lacks
	// Consensus carries bonds from epoch to epoch: a node that started after
	// an earlier record was gossiped computes from another history. Only
	// nodes holding every record any node holds before `from` are compared.
	early := map[*member]int{}
	most := 0
	for _, m := range append(append([]*member{}, validators...), miners...) {
		for _, err := range m.store.EpochRecords(0, from-1) {
			if err == nil {
				early[m]++
			}
		}
		most = max(most, early[m])
	}
	for e := from; e <= to; e++ {
		ep := report.Epoch{Epoch: e, Scores: map[string]map[string]float64{}, Weights: map[string]map[string]float64{},
			Consensus: map[string]float64{}, Incentive: map[string]float64{}, Trust: map[string]float64{},
			Verdicts: map[string]report.Verdicts{}, Identical: true}
		first := true
		for _, m := range append(append([]*member{}, validators...), miners...) {
			held := 0
			for ent, err := range m.store.EpochRecords(e, e) {
				if err == nil && ent.Epoch == e {
					held++
				}
			}
			if held < len(validators) {
				missing[m.info.Name] = append(missing[m.info.Name], e)
				continue // its consensus lacks a record: compared below as missing
			}
			if early[m] < most {
				continue // joined after an earlier record: another bond history
			}
			res, err := node.Consensus(m.store, e, nil, consensus.DefaultParams())
			if err != nil {
				return nil, fmt.Errorf("consensus of epoch %d on %s: %w", e, m.info.Name, err)
			}
			h := res.Hash()
			if first {
				first = false
				ep.ConsensusHash = fmt.Sprintf("%x", h)
				for j, mi := range res.Miners {
					ep.Consensus[name(mi)], ep.Incentive[name(mi)] = res.Consensus[j], res.Incentive[j]
				}
				for j, v := range res.Validators {
					ep.Trust[name(v)] = res.Trust[j]
				}
			} else if fmt.Sprintf("%x", h) != ep.ConsensusHash {
				ep.Identical = false
			}
		}
		for _, v := range validators {
			rec, scores, err := scorers[v].Close(e)
			if err != nil {
				return nil, fmt.Errorf("scoring epoch %d of %s: %w", e, v.info.Name, err)
			}
			_ = rec
			ep.Scores[v.info.Name] = map[string]float64{}
			for _, x := range scores {
				n := name(x.Miner)
				ep.Scores[v.info.Name][n] = x.Total
				m := r.byID[mustPeer(x.Miner)]
				for _, f := range x.Flags {
					if m == nil || flagged[n+f[:min(20, len(f))]] {
						continue
					}
					flagged[n+f[:min(20, len(f))]] = true
					d := report.Detection{Adversary: m.info.Adversary, Node: n, Epoch: e, Kind: "flag", Detail: f,
						AtSeconds: float64(int64(e+1)*int64(r.cfg.EpochLength)-r.start.UnixNano()) / 1e9}
					if m.info.Adversary != "" {
						r.detections = append(r.detections, d)
					} else if !benignFlag(f) && !r.partitioned(d) {
						s.FalsePositives = append(s.FalsePositives, d)
					}
				}
			}
			if raw, err := v.store.EpochRecord(e, []byte(v.id)); err == nil {
				if o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD); err == nil {
					ep.Weights[v.info.Name] = map[string]float64{}
					for _, w := range o.Msg.(*pb.EpochRecord).Weights {
						ep.Weights[v.info.Name][name(peer.ID(w.Miner).String())] = w.Weight
					}
				}
			}
		}
		for _, rd := range r.rounds {
			if rd.Epoch == e {
				vd := ep.Verdicts[rd.Miner]
				if rd.Verified {
					vd.Verified++
				} else {
					vd.Failed++
				}
				ep.Verdicts[rd.Miner] = vd
			}
		}
		s.Epochs = append(s.Epochs, ep)
	}
	// Audits: honest validators' stores must pass; the dishonest one's
	// records contradict its evidence.
	audits := map[string][]string{}
	for _, v := range validators {
		rep, err := node.Audit(v.store, node.AuditOptions{Scoring: sc, Consensus: consensus.DefaultParams(), Local: []peer.ID{v.id}})
		if err != nil {
			return nil, err
		}
		audits[v.info.Name] = rep.Problems
		if v.info.Adversary != "" && len(rep.Problems) > 0 {
			r.detections = append(r.detections, report.Detection{Adversary: v.info.Adversary, Node: v.info.Name,
				Epoch: from, Kind: "audit", Detail: rep.Problems[0], AtSeconds: s.DurationSeconds})
		}
	}
	r.detectEquivocation(s.DurationSeconds)
	r.detectSquatter(s.DurationSeconds)
	for _, d := range r.detections {
		if d.Adversary == "" {
			if !r.partitioned(d) && d.Kind != missedKind {
				s.FalsePositives = append(s.FalsePositives, d)
			}
		} else {
			s.Detections = append(s.Detections, d)
		}
	}
	sort.SliceStable(s.Detections, func(i, j int) bool { return s.Detections[i].AtSeconds < s.Detections[j].AtSeconds })
	s.Gossip = r.latency()
	s.Throughput, s.TimeSharing = r.figures(s, from, to)
	shareLimit, enforceShare := r.shareLimit()
	var unjudged []string
	r.setPresence(s, from, to)
	s.Settings = r.settings()
	s.Profitability, unjudged = adversary.Profitability(s, r.struck(), shareLimit, enforceShare)
	s.JudgedByPay = adversary.JudgedByPay(r.cfg.Adversaries)
	s.Checks = append(r.checks(s, from, audits, missing, unjudged), r.latencyChecks(s)...)
	if len(validators) > 0 {
		s.Checks = append(s.Checks, r.lateJoinChecks(validators[0], from, to, r.auditOptions())...)
	}
	s.Checks = append(s.Checks, r.peerAuditChecks()...)
	s.Checks = append(s.Checks, r.faultChecks()...)
	s.Passed = true
	for _, c := range s.Checks {
		s.Passed = s.Passed && c.OK
	}
	return s, nil
}

// benignFlag tells notes from accusations: a cap on memory credit beyond
// the announced GPUs (a CPU-only miner has none), host figures no proof
// covers (every miner's, until host proofs exist) and availability are
// notes; a measurement contradicting a claim is an accusation.
func benignFlag(f string) bool {
	return strings.HasPrefix(f, "proven memory") || strings.HasPrefix(f, "availability ") ||
		strings.Contains(f, "not covered by a host proof")
}

func mustPeer(s string) peer.ID {
	p, _ := peer.Decode(s)
	return p
}

func (r *run) latency() report.Latency {
	var l report.Latency
	for id, at := range r.received {
		if sent, ok := r.sent[id]; ok {
			l.Samples = append(l.Samples, float64(at.Sub(sent).Microseconds())/1000)
		}
	}
	sort.Float64s(l.Samples)
	pct := func(p float64) float64 {
		if len(l.Samples) == 0 {
			return 0
		}
		return l.Samples[int(math.Ceil(p*float64(len(l.Samples))))-1]
	}
	l.P50, l.P90, l.P99 = pct(0.5), pct(0.9), pct(0.99)
	return l
}

// partitioned tells a consequence of the deliberate partition (--netns
// --partition) apart from a false accusation: a cut-off miner's failed
// rounds during the cut, and the penalty flags that follow.
func (r *run) partitioned(d report.Detection) bool {
	if !strings.Contains(strings.Join(r.cutNames, ","), d.Node) || r.cutTo == 0 {
		return false
	}
	switch d.Kind {
	case "flag":
		return true
	case "failed-round":
		// The deadline and proof timeout of a round started during the cut.
		v := r.nodeConfig().Validator
		slack := 2*v.Deadline.Duration + v.ProofTimeout.Duration + 4*v.RoundTarget.Duration
		return d.AtSeconds >= r.cutFrom.Seconds() && d.AtSeconds <= (r.cutTo+slack).Seconds()
	}
	return false
}
