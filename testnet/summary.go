package testnet

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// summarise recomputes epochs [from, to] from the nodes' stores, audits
// every validator's store and checks the run's expectations.
func (r *run) summarise(from, to uint64) (*report.Summary, error) {
	defer r.closeStores()
	s := r.newSummary()
	validators, miners := r.byRole(s)
	sc := r.scoringConfig()
	es := &epochSummary{r: r, s: s, validators: validators, nodes: append(slices.Clone(validators), miners...),
		scorers: map[*member]*epoch.Scorer{}, flagged: map[string]bool{}, missing: map[string][]uint64{}, differed: map[*member]bool{}}
	for _, v := range validators {
		es.scorers[v] = &epoch.Scorer{Store: v.store, Validator: v.id, Config: sc}
	}
	es.full = fullHistories(es.nodes, from)
	for e := from; e <= to; e++ {
		ep, err := es.epoch(e)
		if err != nil {
			return nil, err
		}
		s.Epochs = append(s.Epochs, ep)
	}
	audits, err := r.auditValidators(s, validators, from, sc)
	if err != nil {
		return nil, err
	}
	s.GossipDropped = r.gossipDropped()
	r.sortDetections(s)
	r.judge(s, from, to, audits, es.missing, validators)
	return s, nil
}

// newSummary is the summary's header: what ran, for how long.
func (r *run) newSummary() *report.Summary {
	return &report.Summary{Seed: r.cfg.Seed, EpochLength: r.cfg.EpochLength.String(), Rounds: r.rounds,
		DurationSeconds: time.Since(r.start).Seconds(), StartedAt: r.start.UTC().Format(time.RFC3339Nano), UpSeconds: r.up.Seconds(), Scale: r.cfg.Scale,
		HostScale: r.params().HostScaleNote(), Simulated: r.cfg.Sim, WallSeconds: (wallNow() - r.wallStart).Seconds()}
}

// byRole lists every member in s and counts the validators and miners,
// which it returns.
func (r *run) byRole(s *report.Summary) (validators, miners []*member) {
	for _, m := range r.members {
		if m.store != nil {
			if n, err := m.store.Bytes(); err == nil {
				m.info.StoreBytes = n // left 0, unreported, if unreadable
			}
		}
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
	return validators, miners
}

// gossipDropped sums the nodes' gossip lost without a verdict, by the
// losing node's role and where it was lost.
func (r *run) gossipDropped() map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range r.members {
		if m.node == nil {
			continue
		}
		d := m.node.GossipDrops()
		for where, n := range map[string]uint64{"rpc_to_validator": d.RPCsToValidators, "rpc_to_other": d.RPCsToOthers,
			"slow_reader": d.SlowReader, "not_validated": d.NotValidated} {
			if n > 0 {
				out[m.info.Role+" "+where] += n
			}
		}
	}
	return out
}

// nameOf is the member name of peer ID id, or id itself.
func (r *run) nameOf(id string) string {
	p, err := peer.Decode(id)
	if m := r.byID[p]; err == nil && m != nil {
		return m.info.Name
	}
	if r.swarm[p] {
		return swarmName
	}
	return id
}

// fullHistories are the nodes holding every epoch record any node holds
// before from. Consensus carries bonds from epoch to epoch: a node that
// started after an earlier record was gossiped computes from another
// history, so only these are compared.
func fullHistories(nodes []*member, from uint64) map[*member]bool {
	early := map[*member]int{}
	most := 0
	for _, m := range nodes {
		for _, err := range m.store.EpochRecords(0, from-1) {
			if err == nil {
				early[m]++
			}
		}
		most = max(most, early[m])
	}
	full := map[*member]bool{}
	for _, m := range nodes {
		full[m] = early[m] == most
	}
	return full
}

// epochSummary recomputes the summarised epochs one at a time.
type epochSummary struct {
	r          *run
	s          *report.Summary
	validators []*member
	nodes      []*member // validators, then miners
	scorers    map[*member]*epoch.Scorer
	full       map[*member]bool    // fullHistories
	flagged    map[string]bool     // node and flag prefix, reported once
	missing    map[string][]uint64 // node → epochs whose records it lacks
	differed   map[*member]bool    // nodes whose consensus of an epoch differed
}

// epoch is epoch e as every node computes its consensus and every
// validator scores it.
func (es *epochSummary) epoch(e uint64) (report.Epoch, error) {
	ep := report.Epoch{Epoch: e, Scores: map[string]map[string]float64{}, Weights: map[string]map[string]float64{}, Storage: map[string]map[string]float64{},
		Consensus: map[string]float64{}, Incentive: map[string]float64{}, Trust: map[string]float64{},
		Verdicts: map[string]report.Verdicts{}, Identical: true}
	if err := es.consensus(&ep); err != nil {
		return ep, err
	}
	ep.RecordSeconds = es.r.recordSeconds(e)
	for _, v := range es.validators {
		if err := es.scores(&ep, v); err != nil {
			return ep, err
		}
		es.weights(&ep, v)
	}
	if err := es.hostParts(&ep); err != nil {
		return ep, err
	}
	if err := es.loadedCPU(&ep); err != nil {
		return ep, err
	}
	for _, rd := range es.r.rounds {
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
	return ep, nil
}

// consensus computes ep's consensus on every node holding all its records
// and the same history. The hash most of them compute gives the figures;
// each node computing another is named in ep.Differs with why. A node
// lacking a record is noted as missing it.
func (es *epochSummary) consensus(ep *report.Epoch) error {
	hashes := map[*member]string{}
	results := map[string]*consensus.Result{}
	count := map[string]int{}
	ep.Lacking = map[string]int{}
	for _, m := range es.nodes {
		if !es.holdsAll(m, ep.Epoch, ep.Lacking) {
			es.missing[m.info.Name] = append(es.missing[m.info.Name], ep.Epoch)
			continue // its consensus lacks a record: compared as missing
		}
		if !es.full[m] {
			continue // joined after an earlier record: another bond history
		}
		res, err := epoch.Consensus(m.store, ep.Epoch, nil, consensus.DefaultParams())
		if err != nil {
			// No record counts where it froze the epoch empty: it
			// differs, and says why, rather than ending the summary.
			hashes[m] = "error: " + err.Error()
			continue
		}
		h := fmt.Sprintf("%x", res.Hash())
		hashes[m], results[h] = h, res
		if count[h]++; count[h] > count[ep.ConsensusHash] {
			ep.ConsensusHash = h
		}
	}
	if res := results[ep.ConsensusHash]; res != nil {
		es.figures(ep, res)
	}
	for _, m := range es.nodes {
		if h, ok := hashes[m]; ok && h != ep.ConsensusHash {
			ep.Identical = false
			why := es.whyDiffers(m, ep.Epoch)
			if strings.HasPrefix(h, "error: ") {
				why = strings.TrimPrefix(h, "error: ") + "; " + why
			}
			ep.Differs = append(ep.Differs, m.info.Name+": "+why)
			es.differed[m] = true
		}
	}
	return nil
}

// figures fills ep's consensus, incentive and trust from res.
func (es *epochSummary) figures(ep *report.Epoch, res *consensus.Result) {
	for j, mi := range res.Miners {
		ep.Consensus[es.r.nameOf(mi)], ep.Incentive[es.r.nameOf(mi)] = res.Consensus[j], res.Incentive[j]
	}
	for j, v := range res.Validators {
		ep.Trust[es.r.nameOf(v)] = res.Trust[j]
	}
}

// holdsAll says whether m stores a record of epoch e from every
// validator, and counts in lacking, by validator name, each it lacks.
func (es *epochSummary) holdsAll(m *member, e uint64, lacking map[string]int) bool {
	held := map[peer.ID]bool{}
	for ent, err := range m.store.EpochRecords(e, e) {
		if err == nil && ent.Epoch == e {
			held[peer.ID(ent.Validator)] = true
		}
	}
	for _, v := range es.validators {
		if !held[v.id] {
			lacking[v.info.Name]++
		}
	}
	return len(held) >= len(es.validators)
}

// whyDiffers says why node m, holding every record of epoch e, computes
// another consensus than most nodes: records its final set leaves out
// (they arrived after e was final there, SPEC §20), or an earlier epoch's
// consensus that differed and carried its bonds.
func (es *epochSummary) whyDiffers(m *member, e uint64) string {
	f, err := m.store.Final(e)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "it froze no final set, so counts every record it holds"
	case err != nil:
		return "its final set is unreadable: " + err.Error()
	}
	var late []string
	for ent, err := range m.store.EpochRecords(e, e) {
		if err != nil {
			return "its records are unreadable: " + err.Error()
		}
		o, err := protocol.Decode(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil || f.Counts(ent.Validator, protocol.ID(o.Body)) || f.IsExcluded(ent.Validator) {
			continue
		}
		late = append(late, es.r.arrival(e, m.id, peer.ID(ent.Validator)))
	}
	final := epoch.FinalAt(e, es.r.params().Node().Network.FinalityEpochs, es.r.cfg.EpochLength).Sub(es.r.start).Seconds()
	if slices.Sort(late); len(late) > 0 {
		return fmt.Sprintf("its final set (epoch final at %.1f s) leaves out %s", final, strings.Join(late, ", "))
	}
	if es.differed[m] {
		return "the same records counted; its consensus of an earlier epoch differed, and bonds carry"
	}
	return fmt.Sprintf("the same records counted (%d in its final set, %d excluded); not explained", len(f.Included), len(f.Excluded))
}

// scores closes ep on validator v as it did, and reports each new flag it
// raised: against an adversary a detection, against an honest miner a
// false positive unless it is a note or the partition's doing.
func (es *epochSummary) scores(ep *report.Epoch, v *member) error {
	r := es.r
	_, scores, err := es.scorers[v].Close(ep.Epoch)
	if err != nil {
		return fmt.Errorf("scoring epoch %d of %s: %w", ep.Epoch, v.info.Name, err)
	}
	ep.Scores[v.info.Name] = map[string]float64{}
	ep.Storage[v.info.Name] = map[string]float64{}
	for _, x := range scores {
		n := r.nameOf(x.Miner)
		ep.Scores[v.info.Name][n], ep.Storage[v.info.Name][n] = x.Total, x.Storage
		m := r.byID[mustPeer(x.Miner)]
		for _, f := range x.Flags {
			key := n + f[:min(20, len(f))]
			if m == nil || es.flagged[key] {
				continue
			}
			es.flagged[key] = true
			d := report.Detection{Adversary: m.info.Adversary, Node: n, Epoch: ep.Epoch, Kind: "flag", Detail: f,
				AtSeconds: float64(int64(ep.Epoch+1)*int64(r.cfg.EpochLength)-r.start.UnixNano()) / 1e9}
			if m.info.Adversary != "" {
				r.detections = append(r.detections, d)
			} else if !benignFlag(f) && !r.partitioned(d) {
				es.s.FalsePositives = append(es.s.FalsePositives, d)
			}
		}
	}
	return nil
}

// weights are the weights validator v signed in its record of ep.
func (es *epochSummary) weights(ep *report.Epoch, v *member) {
	raw, err := v.store.EpochRecord(ep.Epoch, []byte(v.id))
	if err != nil {
		return
	}
	o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		return
	}
	ep.Weights[v.info.Name] = map[string]float64{}
	for _, w := range o.Msg.(*pb.EpochRecord).Weights {
		ep.Weights[v.info.Name][es.r.nameOf(peer.ID(w.Miner).String())] = w.Weight
	}
}

// auditValidators audits every validator's store: honest ones must pass;
// the dishonest one's records contradict its evidence, a detection. It
// returns each validator's problems.
func (r *run) auditValidators(s *report.Summary, validators []*member, from uint64, sc scoring.Config) (map[string][]string, error) {
	audits := map[string][]string{}
	for _, v := range validators {
		rep, err := audit.Audit(v.store, audit.Options{Scoring: sc, Consensus: consensus.DefaultParams(), Local: []peer.ID{v.id}})
		if err != nil {
			return nil, err
		}
		audits[v.info.Name] = rep.Problems
		if v.info.Adversary != "" && len(rep.Problems) > 0 {
			r.detections = append(r.detections, report.Detection{Adversary: v.info.Adversary, Node: v.info.Name,
				Epoch: from, Kind: "audit", Detail: rep.Problems[0], AtSeconds: s.DurationSeconds})
		}
	}
	return audits, nil
}

// sortDetections adds the equivocation and squatter detections, then
// sorts every detection into s: an adversary's by time, an honest node's
// as a false positive unless the partition or a missed round explains it.
func (r *run) sortDetections(s *report.Summary) {
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
}

// judge adds the run's figures (gossip latency, throughput, presence,
// settings, gains) and every check to s, and whether all passed.
func (r *run) judge(s *report.Summary, from, to uint64, audits map[string][]string, missing map[string][]uint64, validators []*member) {
	s.Gossip = r.latency()
	s.Throughput, s.TimeSharing = r.figures(s, from, to)
	shareLimit, enforceShare := r.shareLimit()
	var unjudged []string
	r.setPresence(s, from, to)
	s.Settings = r.params().Settings()
	s.Profitability, unjudged = adversary.Profitability(s, r.struck(), shareLimit, enforceShare)
	for i, p := range s.Profitability {
		if p.Adversary == "cpu-outsource" { // time-shared, and its CPU parts (SPEC §23.2)
			s.Profitability[i].Limit += adversary.CPUOutsourceLeak(s, r.params().Scoring())
		}
	}
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
	for rc, at := range r.received {
		if sent, ok := r.sent[rc.id]; ok {
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
