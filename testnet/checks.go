package testnet

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// checks are the run's own expectations (issue: testnet), in the order
// the report lists them.
func (r *run) checks(s *report.Summary, first uint64, audits map[string][]string, missing map[string][]uint64, unjudged []string) []report.Check {
	nodes := map[string]report.Node{}
	var honest []report.Node // undelayed, unloaded: latencyChecks and LoadedCheck judge the others
	for _, n := range s.Nodes {
		nodes[n.Name] = n
		if n.Role == "miner" && n.Adversary == "" && n.AddedLatencyMs == 0 && !n.Loaded {
			honest = append(honest, n)
		}
	}
	out := r.rankingChecks(s, honest)
	out = append(out, recordChecks(s, first, missing)...)
	out = append(out, auditCheck(s, nodes, audits), penaltyCheck(s, nodes, len(honest)))
	out = append(out, adversary.ProfitCheck(s.Profitability, unjudged))
	return append(out, r.adversaryChecks(s, first, nodes, honest)...)
}

// check is a check whose detail is formatted.
func check(name string, ok bool, format string, args ...any) report.Check {
	return report.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)}
}

// rankingChecks: honest miners in profile order, by mean incentive (of
// two, the one with the faster GPU and no smaller a host earns more; a
// faster GPU on a smaller host need not: the host is 45 % of the score),
// and by host among the same GPU. A partition penalises the miners it
// cuts off, so it replaces both with whether the network healed.
func (r *run) rankingChecks(s *report.Summary, honest []report.Node) []report.Check {
	const name = "honest miners ranked in profile order"
	if r.cfg.Partition {
		return []report.Check{check(name, true, "not checked: a partition penalises the miners it cuts off"), r.healCheck(s)}
	}
	sort.SliceStable(honest, func(i, j int) bool { return honest[i].ProfileTFLOPS > honest[j].ProfileTFLOPS })
	var wrong []string
	for i, n := range honest {
		for _, m := range honest[i+1:] {
			pn, pm := machine.ByName(n.Profile), machine.ByName(m.Profile)
			if n.ProfileTFLOPS > m.ProfileTFLOPS && !biggerHost(pm.Host, pn.Host) && !(adversary.MeanIncentive(s, n.Name) > adversary.MeanIncentive(s, m.Name)) {
				wrong = append(wrong, incentives(s, n)+" ≤ "+incentives(s, m))
			}
		}
	}
	detail := "mean incentives: " + incentiveOrder(s, honest)
	if len(wrong) > 0 {
		detail = fmt.Sprintf("%d pairs out of order, %s; %s", len(wrong), firstOf(wrong), detail)
	}
	hostOK, hostDetail := hostRanking(s, honest)
	return []report.Check{check(name, len(wrong) == 0, "%s", detail),
		check("honest miners with the same GPU ranked by host", hostOK, "%s", hostDetail)}
}

// incentives is "name(profile)=mean incentive".
func incentives(s *report.Summary, n report.Node) string {
	return fmt.Sprintf("%s(%s)=%.4f", n.Name, n.Profile, adversary.MeanIncentive(s, n.Name))
}

// listedMiners is how many miners a check's detail names one by one; past
// it, a large network's detail would run to hundreds of kilobytes.
const listedMiners = 12

// incentiveOrder lists honest (in profile order) with their mean
// incentives, or past listedMiners each profile's median and range.
func incentiveOrder(s *report.Summary, honest []report.Node) string {
	var out []string
	if len(honest) <= listedMiners {
		for _, n := range honest {
			out = append(out, incentives(s, n))
		}
		return strings.Join(out, ", ")
	}
	var profiles []string
	by := map[string][]float64{}
	for _, n := range honest {
		if by[n.Profile] == nil {
			profiles = append(profiles, n.Profile)
		}
		by[n.Profile] = append(by[n.Profile], adversary.MeanIncentive(s, n.Name))
	}
	for _, p := range profiles {
		v := by[p]
		slices.Sort(v)
		out = append(out, fmt.Sprintf("%s ×%d median %.4f (%.4f–%.4f)", p, len(v), v[len(v)/2], v[0], v[len(v)-1]))
	}
	return strings.Join(out, ", ")
}

// firstOf is "first: a; b; c" of at most three of items.
func firstOf(items []string) string {
	return "first: " + strings.Join(items[:min(3, len(items))], "; ")
}

// healCheck: every miner the partition cut off is verified again after it.
func (r *run) healCheck(s *report.Summary) report.Check {
	var unhealed []string
	for _, n := range r.cutNames {
		healed := false
		for _, rd := range s.Rounds {
			healed = healed || (rd.Miner == n && rd.Verified && rd.AtSeconds > r.cutTo.Seconds())
		}
		if !healed {
			unhealed = append(unhealed, n)
		}
	}
	healed := "every one verified again since"
	if len(unhealed) > 0 {
		healed = "not verified since: " + strings.Join(unhealed, ", ")
	}
	return check("network heals after the partition", r.cutTo > 0 && len(unhealed) == 0,
		"cut %v from %.1f s to %.1f s; %s", r.cutNames, r.cutFrom.Seconds(), r.cutTo.Seconds(), healed)
}

// recordChecks: every node computes the same consensus and holds every
// validator's records of the summarised epochs.
func recordChecks(s *report.Summary, first uint64, missing map[string][]uint64) []report.Check {
	identical, differs := true, ""
	for _, e := range s.Epochs {
		identical = identical && e.Identical
		if len(e.Differs) > 0 {
			differs += fmt.Sprintf("; epoch %d: %d nodes differ: %s", e.Epoch, len(e.Differs), strings.Join(e.Differs, "; "))
		}
	}
	out := []report.Check{check("identical consensus on every node", identical, "%d epochs, %d nodes each (nodes lacking records excluded)%s",
		len(s.Epochs), s.Validators+s.Miners, truncate(differs, 600))}
	const held = "every node holds every validator's epoch records"
	var lacking []string
	for _, n := range sortedKeys(missing) {
		lacking = append(lacking, fmt.Sprintf("%s lacks epochs %v", n, missing[n]))
	}
	if len(lacking) > 0 {
		return append(out, check(held, false, "%d nodes short: %s", len(lacking), truncate(strings.Join(lacking, "; "), 400)))
	}
	last := s.Epochs[len(s.Epochs)-1]
	return append(out, check(held, true, "all %d nodes hold %d validators' records of epochs %d–%d",
		s.Validators+s.Miners, s.Validators, first, last.Epoch))
}

// auditCheck: pog audit passes on every honest validator's store.
func auditCheck(s *report.Summary, nodes map[string]report.Node, audits map[string][]string) report.Check {
	const name = "pog audit passes on every honest validator's store"
	var failing []string
	for v, p := range audits {
		if nodes[v].Adversary == "" && len(p) > 0 {
			failing = append(failing, v+": "+p[0])
		}
	}
	if len(failing) > 0 {
		return check(name, false, "%s", strings.Join(failing, "; "))
	}
	return check(name, true, "%d honest validators' stores audited clean", adversary.HonestValidators(s))
}

// penaltyCheck: no failed round or accusing flag on an undelayed honest
// miner (latencyChecks judge the delayed ones).
func penaltyCheck(s *report.Summary, nodes map[string]report.Node, honest int) report.Check {
	const name = "no honest miner penalised"
	var fp []string
	for _, d := range s.FalsePositives {
		if nodes[d.Node].AddedLatencyMs == 0 {
			fp = append(fp, fmt.Sprintf("%s: %s %s", d.Node, d.Kind, d.Detail))
		}
	}
	if len(fp) > 0 {
		return check(name, false, "%s", truncate(strings.Join(fp, "; "), 400))
	}
	return check(name, true, "no failed round or accusing flag on any of %d honest miners", honest)
}

// adversaryChecks judge each adversary class: the ones not meant to be
// detected by what they earn, the others detected by the first full
// epoch, and penalised.
func (r *run) adversaryChecks(s *report.Summary, first uint64, nodes map[string]report.Node, honest []report.Node) []report.Check {
	honestOf := map[string]string{} // profile → an honest miner of it
	for _, n := range honest {
		if honestOf[n.Profile] == "" {
			honestOf[n.Profile] = n.Name
		}
	}
	minHonestTrust := 2.0
	for v, t := range s.Epochs[len(s.Epochs)-1].Trust {
		if nodes[v].Adversary == "" && t < minHonestTrust {
			minHonestTrust = t
		}
	}
	var out []report.Check
	for _, a := range r.cfg.Adversaries {
		switch {
		case a == "loaded":
			if r.cfg.Sim { // the job is modelled in virtual time only
				out = append(out, adversary.LoadedCheck(s))
			}
		case a == "far" || a == "timeshare":
			// honest, or cheats without a detectable fault: latencyChecks
		case a == "cpu-outsource":
			if r.cfg.Sim { // the server is modelled in virtual time only
				out = append(out, adversary.CPUOutsourceCheck(s), adversary.PaidCheck(a, s))
			}
		case a == "ram-rebuild":
			if r.cfg.Sim { // the rebuild is modelled in virtual time only
				out = append(out, adversary.RAMRebuildCheck(s), adversary.PaidCheck(a, s))
			}
		case a == "squatter":
			out = append(out, adversary.SquatterCheck(s, victimName, "miner-1"))
		case a == "beacon-split":
			out = append(out, r.beaconSplitCheck(first, first+uint64(r.cfg.Epochs)-1))
		case a == swarmName:
			out = append(out, r.swarmCheck(s))
		case slices.Contains(adversary.ByPay, a):
			out = append(out, adversary.PaidCheck(a, s))
		default:
			out = append(out, r.detectedCheck(a, s, first, honestOf, minHonestTrust))
		}
	}
	return out
}

// detectedCheck: adversary a was detected by the first full epoch (a
// gossip score or an audit at any time), and penalised.
func (r *run) detectedCheck(a string, s *report.Summary, first uint64, honestOf map[string]string, minHonestTrust float64) report.Check {
	name := "adversary " + a + " detected and penalised"
	var det *report.Detection
	for i := range s.Detections {
		if d := &s.Detections[i]; d.Adversary == a && (det == nil || d.AtSeconds < det.AtSeconds) {
			det = d
		}
	}
	if det == nil {
		return check(name, false, "never detected")
	}
	inTime := det.Epoch <= first || det.Kind == "peer-score" || det.Kind == "audit"
	penalised, how := r.penalised(a, s, honestOf, minHonestTrust)
	return check(name, inTime && penalised, "%s in epoch %d (%s: %s); %s", det.Node, det.Epoch, det.Kind, truncate(det.Detail, 120), how)
}

// penalised says how adversary class a fared in the last epoch.
func (r *run) penalised(a string, s *report.Summary, honestOf map[string]string, minHonestTrust float64) (bool, string) {
	last := s.Epochs[len(s.Epochs)-1]
	cheater := map[string]string{"lazy": "lazy", "precision": "precision", "replay": "replay", "sybil": "sybil-b",
		"overclaim": "overclaim", "slow": "slow"}[a]
	claimed := map[string]string{"lazy": "H100", "precision": "A100", "replay": "A100", "sybil": "RTX4090",
		"overclaim": "H200", "slow": "H100"}[a]
	switch a {
	case "spammer", "forger":
		return true, "gossip score below zero at a validator"
	case "dishonest-validator":
		t := last.Trust["validator-dishonest"]
		return t < minHonestTrust, fmt.Sprintf("trust %.3f vs honest validators' ≥ %.3f", t, minHonestTrust)
	case "equivocator":
		return r.equivocatorIgnored(last.Epoch)
	}
	ref := honestOf[claimed]
	got := adversary.MeanIncentive(s, cheater)
	if ref == "" {
		return got < 1e-9, fmt.Sprintf("mean incentive %.4f", got)
	}
	want := adversary.MeanIncentive(s, ref)
	return got < want, fmt.Sprintf("mean incentive %.4f < %.4f of honest %s (%s)", got, want, ref, claimed)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// hostRanking checks that of two honest miners with the same GPU, the one
// whose profile's host is bigger (no less RAM and storage, more of one)
// earns more mean incentive over the summarised epochs.
func hostRanking(s *report.Summary, honest []report.Node) (bool, string) {
	var pairs, wrong []string
	for _, a := range honest {
		for _, b := range honest {
			pa, pb := machine.ByName(a.Profile), machine.ByName(b.Profile)
			if pa.GPU != pb.GPU || pa.FP16TFLOPS != pb.FP16TFLOPS || !biggerHost(pa.Host, pb.Host) {
				continue
			}
			pair := incentives(s, a) + " > " + incentives(s, b)
			pairs = append(pairs, pair)
			if !(adversary.MeanIncentive(s, a.Name) > adversary.MeanIncentive(s, b.Name)) {
				wrong = append(wrong, pair)
			}
		}
	}
	switch {
	case len(pairs) == 0:
		return true, "not checked: no two honest miners with the same GPU and different hosts"
	case len(wrong) > 0:
		sort.Strings(wrong)
		return false, fmt.Sprintf("%d of %d pairs out of order, %s", len(wrong), len(pairs), firstOf(wrong))
	case len(pairs) > listedMiners:
		return true, fmt.Sprintf("all %d pairs in order", len(pairs))
	}
	sort.Strings(pairs)
	return true, "mean incentives: " + strings.Join(pairs, "; ")
}

// biggerHost says whether host a has no less RAM and storage than b, and
// more of one.
func biggerHost(a, b *pb.Hardware) bool {
	return a.RamBytes >= b.RamBytes && a.StorageBytes >= b.StorageBytes && (a.RamBytes > b.RamBytes || a.StorageBytes > b.StorageBytes)
}

func orEmpty(prefix string, s []string) string {
	if len(s) == 0 {
		return ""
	}
	return prefix + strings.Join(s, ", ")
}
