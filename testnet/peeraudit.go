package testnet

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/testnet/report"
)

// The public auditor (issue 13): once the last epoch is in, and while every
// node still runs, an auditor with no role and no store runs `pog audit
// --peer` (node.PeerAudit) against each validator. Honest validators must
// pass with their weights recomputed; the dishonest validator's bad records
// must be named.

// peerAudit is one validator's public audit.
type peerAudit struct {
	rep *node.PeerAuditReport
	err error
}

// peerAudits audits every validator over the network, one after another,
// from one auditor host.
func (r *run) peerAudits(ctx context.Context) {
	out := map[string]peerAudit{}
	defer func() {
		r.mu.Lock()
		r.audits = out
		r.mu.Unlock()
	}()
	h, err := r.auditHost()
	if err != nil {
		for _, m := range r.validatorMembers() {
			out[m.info.Name] = peerAudit{err: err}
		}
		return
	}
	defer h.Close()
	opts := node.PeerAuditOptions{Scoring: r.scoringConfig(), Consensus: consensus.DefaultParams()}
	for _, m := range r.validatorMembers() {
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		rep, err := auditOne(actx, h, m, opts)
		cancel()
		out[m.info.Name] = peerAudit{rep, err}
		if err != nil {
			continue
		}
		r.progress("auditor: %s: %d records, %d recomputed, %d problems", m.info.Name, rep.EpochRecords, rep.Recomputed, len(rep.Problems))
		if bad := badRecords(m, rep); m.info.Adversary != "" && len(bad) > 0 {
			r.mu.Lock()
			r.detections = append(r.detections, report.Detection{Adversary: m.info.Adversary, Node: m.info.Name,
				Epoch: epochAt(time.Now(), r.cfg.EpochLength), Kind: "audit", Detail: "pog audit --peer: " + bad[0], AtSeconds: time.Since(r.start).Seconds()})
			r.mu.Unlock()
		}
	}
}

// badRecords are the audit's problems naming m's epoch records.
func badRecords(m *member, rep *node.PeerAuditReport) []string {
	var bad []string
	for _, p := range rep.Problems {
		if strings.Contains(p, m.id.String()) && strings.Contains(p, "epoch record") {
			bad = append(bad, p)
		}
	}
	return bad
}

func auditOne(ctx context.Context, h host.Host, m *member, opts node.PeerAuditOptions) (*node.PeerAuditReport, error) {
	addr := m.addr
	if m.node != nil {
		addrs := m.node.Addrs()
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s listens nowhere: its node stopped", m.info.Name) // a store fault
		}
		addr = addrs[0]
	}
	a, err := ma.NewMultiaddr(addr)
	if err != nil {
		return nil, err
	}
	info, err := peer.AddrInfoFromP2pAddr(a)
	if err != nil {
		return nil, err
	}
	if err := h.Connect(ctx, *info); err != nil {
		return nil, fmt.Errorf("cannot reach %s: %w", addr, err)
	}
	return node.PeerAudit(ctx, h, info.ID, opts)
}

func (r *run) validatorMembers() []*member {
	var out []*member
	for _, m := range r.members {
		if m.info.Role == string(node.RoleValidator) {
			out = append(out, m)
		}
	}
	return out
}

// peerAuditChecks judges the public audits: every honest validator passes,
// and, if one runs, the dishonest validator's bad records are named.
func (r *run) peerAuditChecks() []report.Check {
	r.mu.Lock()
	audits := r.audits
	r.mu.Unlock()
	if audits == nil {
		return nil
	}
	var out []report.Check
	var passed, failed []string
	for _, m := range r.validatorMembers() {
		a := audits[m.info.Name]
		switch {
		case m.info.Adversary != "" || r.downByFault(m):
			continue // a store fault stopped it for good: nothing to reach
		case a.err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", m.info.Name, a.err))
		case len(a.rep.Problems) > 0 || len(a.rep.Audited) == 0 || a.rep.Recomputed == 0:
			failed = append(failed, fmt.Sprintf("%s: %d recomputed, unfetched %v, problems %v", m.info.Name, a.rep.Recomputed,
				a.rep.Unfetched, truncate(strings.Join(a.rep.Problems, "; "), 200)))
		default:
			passed = append(passed, fmt.Sprintf("%s (%d records, %d recomputed, %d proofs)", m.info.Name, a.rep.EpochRecords, a.rep.Recomputed, a.rep.ProofsVerified))
		}
	}
	sort.Strings(failed)
	out = append(out, report.Check{Name: "auditor with no role: pog audit --peer passes for every honest validator",
		OK: len(failed) == 0 && len(passed) > 0, Detail: "passed: " + strings.Join(passed, ", ") + orEmpty("; failed: ", failed)})
	for _, m := range r.validatorMembers() {
		if m.info.Adversary != "dishonest-validator" {
			continue
		}
		a := audits[m.info.Name]
		var bad []string
		if a.err == nil {
			bad = badRecords(m, a.rep)
		}
		detail := fmt.Sprintf("%d bad records named", len(bad))
		switch {
		case a.err != nil:
			detail = a.err.Error()
		case len(bad) > 0:
			detail += ", first: " + truncate(bad[0], 200)
		}
		out = append(out, report.Check{Name: "auditor names the dishonest validator's bad records", OK: len(bad) > 0, Detail: detail})
	}
	return out
}

func orEmpty(prefix string, s []string) string {
	if len(s) == 0 {
		return ""
	}
	return prefix + strings.Join(s, ", ")
}

// auditHost is the public auditor's host: on the simulated network it
// listens, as a QUIC host there must to dial.
func (r *run) auditHost() (host.Host, error) {
	if r.sim == nil {
		return node.NewAuditHost()
	}
	listen, t := r.sim.Endpoint("auditor", 0)
	h, err := node.NewAuditHost(t...)
	if err != nil {
		return nil, err
	}
	if err := h.Network().Listen(multiaddr.StringCast(listen)); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}
