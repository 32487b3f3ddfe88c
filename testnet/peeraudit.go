package testnet

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/testnet/auditor"
	"github.com/pog-network/pog/testnet/report"
)

// peerAudits runs the public auditor (package auditor) against every
// validator, noting the first bad record it names of an adversarial one as
// that adversary's detection.
func (r *run) peerAudits(ctx context.Context) {
	vs := r.auditTargets()
	out := map[string]auditor.Result{}
	defer func() {
		r.mu.Lock()
		r.audits = out
		r.mu.Unlock()
	}()
	h, err := r.auditHost()
	if err != nil {
		for _, v := range vs {
			out[v.Name] = auditor.Result{Err: err}
		}
		return
	}
	defer h.Close()
	opts := audit.PeerAuditOptions{Scoring: r.scoringConfig(), Consensus: consensus.DefaultParams()}
	defer r.auditSquatted(ctx, h, opts)
	out = auditor.Audit(ctx, h, vs, opts, func(v auditor.Validator, a auditor.Result) {
		if a.Err != nil {
			return
		}
		rep := a.Report
		r.progress("auditor: %s: %d records, %d recomputed, %d problems", v.Name, rep.EpochRecords, rep.Recomputed, len(rep.Problems))
		if bad := auditor.BadRecords(v.ID, rep); v.Adversary != "" && len(bad) > 0 {
			r.mu.Lock()
			r.detections = append(r.detections, report.Detection{Adversary: v.Adversary, Node: v.Name,
				Epoch: epochAt(time.Now(), r.cfg.EpochLength), Kind: "audit", Detail: "pog audit --peer: " + bad[0], AtSeconds: time.Since(r.start).Seconds()})
			r.mu.Unlock()
		}
	})
}

// auditSquatted audits the squatter's victim, when the squatter runs, as
// `pog audit --peer` does with the network's validator set: the
// off-schedule challenges the victim keeps are fetched and judged.
func (r *run) auditSquatted(ctx context.Context, h host.Host, opts audit.PeerAuditOptions) {
	victim, stakes := r.memberNamed(victimName), r.stakes()
	if victim == nil || stakes == nil {
		return
	}
	cfg := r.nodeConfig()
	opts.Stakes = stakes
	opts.Slots = func(st map[string]float64) audit.SlotRule { return node.SlotRule(st, cfg) }
	res := auditor.Peer(ctx, h, victim.listenAddr, opts)
	r.progress("auditor: %s: off-schedule challenges of %d epochs fetched", victimName, offScheduleEpochs(res))
	r.mu.Lock()
	r.squatted = &res
	r.mu.Unlock()
}

func offScheduleEpochs(a auditor.Result) int {
	if a.Report == nil {
		return 0
	}
	return a.Report.OffScheduleEpochs
}

// auditTargets are the validators as the public auditor sees them.
func (r *run) auditTargets() []auditor.Validator {
	var out []auditor.Validator
	for _, m := range r.validatorMembers() {
		out = append(out, auditor.Validator{Name: m.info.Name, ID: m.id, Adversary: m.info.Adversary, Addr: m.listenAddr, Down: r.downByFault(m)})
	}
	return out
}

// listenAddr is where m listens, with /p2p: in process its node's first
// address.
func (m *member) listenAddr() (string, error) {
	if m.node == nil {
		return m.addr, nil
	}
	addrs := m.node.Addrs()
	if len(addrs) == 0 {
		return "", fmt.Errorf("%s listens nowhere: its node stopped", m.info.Name) // a store fault
	}
	return addrs[0], nil
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

// peerAuditChecks judges the public audits, once they ran.
func (r *run) peerAuditChecks() []report.Check {
	r.mu.Lock()
	audits, squatted := r.audits, r.squatted
	r.mu.Unlock()
	if audits == nil {
		return nil
	}
	out := auditor.Checks(r.auditTargets(), audits)
	if sq := r.memberNamed(squatterName); sq != nil && squatted != nil {
		out = append(out, auditor.SquatterCheck(sq.id, *squatted))
	}
	return out
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
