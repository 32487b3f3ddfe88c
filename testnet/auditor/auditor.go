// Package auditor is the testnet's public auditor: once the last epoch is
// in, and while every node still runs, a host with no role and no store
// runs `pog audit --peer` (node.PeerAudit) against each validator. Honest
// validators must pass with their weights recomputed; the dishonest
// validator's bad records must be named. Package testnet says whom to
// audit, where each listens and from which host.
package auditor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/testnet/report"
)

// Validator is a validator to audit.
type Validator struct {
	Name      string
	ID        peer.ID
	Adversary string // its adversary class; empty: honest
	// Addr is where it listens, with /p2p, asked when its audit starts.
	Addr func() (string, error)
	// Down says a fault stopped it for good: there is nothing to reach,
	// and nothing to judge.
	Down bool
}

// Result is one validator's public audit.
type Result struct {
	Report *audit.PeerAuditReport
	Err    error
}

// Audit audits every validator over the network, one after another, from
// host h, each within a minute. It passes each result to done as it
// comes, and returns them all by validator name.
func Audit(ctx context.Context, h host.Host, vs []Validator, opts audit.PeerAuditOptions, done func(Validator, Result)) map[string]Result {
	out := map[string]Result{}
	for _, v := range vs {
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		rep, err := auditOne(actx, h, v, opts)
		cancel()
		out[v.Name] = Result{rep, err}
		done(v, out[v.Name])
	}
	return out
}

// Peer audits, from h, the peer listening at addr (a miner, say) as `pog
// audit --peer` does: with opts.Slots set, the off-schedule challenges it
// keeps are fetched and their signers named.
func Peer(ctx context.Context, h host.Host, addr func() (string, error), opts audit.PeerAuditOptions) Result {
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	rep, err := auditOne(actx, h, Validator{Addr: addr}, opts)
	return Result{rep, err}
}

// SquatterCheck judges the audit of the squatted miner: it names the
// squatter as the signer of off-schedule challenges, unstaked, so that its
// signature alone proves them.
func SquatterCheck(squatter peer.ID, a Result) report.Check {
	c := report.Check{Name: "auditor with no role: pog audit --peer on the squatted miner names the squatter's off-schedule challenges"}
	switch {
	case a.Err != nil:
		c.Detail = a.Err.Error()
		return c
	case a.Report == nil:
		c.Detail = "not audited"
		return c
	}
	named := []string{}
	for _, s := range append(a.Report.OffSchedule, a.Report.OffScheduleOthers...) {
		named = append(named, fmt.Sprintf("%s: %d in %d epochs (unstaked %v)", s.Signer, s.Challenges, s.Epochs, s.Unstaked))
		if s.Signer == squatter.String() && s.Unstaked && s.Challenges > 0 {
			c.OK = true
		}
	}
	c.Detail = fmt.Sprintf("%d epochs fetched; signers named: %s", a.Report.OffScheduleEpochs, strings.Join(named, "; "))
	if len(a.Report.Problems) > 0 {
		c.Detail += "; problems: " + truncate(strings.Join(a.Report.Problems, "; "), 300)
	}
	return c
}

// BadRecords are the audit's problems naming validator id's epoch
// records.
func BadRecords(id peer.ID, rep *audit.PeerAuditReport) []string {
	var bad []string
	for _, p := range rep.Problems {
		if strings.Contains(p, id.String()) && strings.Contains(p, "epoch record") {
			bad = append(bad, p)
		}
	}
	return bad
}

func auditOne(ctx context.Context, h host.Host, v Validator, opts audit.PeerAuditOptions) (*audit.PeerAuditReport, error) {
	addr, err := v.Addr()
	if err != nil {
		return nil, err
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
	return audit.PeerAudit(ctx, h, info.ID, opts)
}

// Checks judges the public audits of vs: every honest validator passes,
// and, if one runs, the dishonest validator's bad records are named.
func Checks(vs []Validator, audits map[string]Result) []report.Check {
	var out []report.Check
	var passed, failed []string
	for _, v := range vs {
		a := audits[v.Name]
		switch {
		case v.Adversary != "" || v.Down:
			continue
		case a.Err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", v.Name, a.Err))
		case a.Report == nil:
			failed = append(failed, v.Name+": not audited")
		case len(a.Report.Problems) > 0 || len(a.Report.Audited) == 0 || a.Report.Recomputed == 0:
			failed = append(failed, fmt.Sprintf("%s: %d recomputed, unfetched %v, problems %v", v.Name, a.Report.Recomputed,
				a.Report.Unfetched, truncate(strings.Join(a.Report.Problems, "; "), 200)))
		default:
			passed = append(passed, fmt.Sprintf("%s (%d records, %d recomputed, %d proofs)", v.Name, a.Report.EpochRecords, a.Report.Recomputed, a.Report.ProofsVerified))
		}
	}
	sort.Strings(failed)
	out = append(out, report.Check{Name: "auditor with no role: pog audit --peer passes for every honest validator",
		OK: len(failed) == 0 && len(passed) > 0, Detail: "passed: " + strings.Join(passed, ", ") + orEmpty("; failed: ", failed)})
	for _, v := range vs {
		if v.Adversary == "dishonest-validator" {
			out = append(out, dishonestCheck(v, audits[v.Name]))
		}
	}
	return out
}

// dishonestCheck: the audit of the dishonest validator v names its bad
// records.
func dishonestCheck(v Validator, a Result) report.Check {
	if a.Err == nil && a.Report == nil {
		a.Err = fmt.Errorf("not audited")
	}
	var bad []string
	if a.Err == nil {
		bad = BadRecords(v.ID, a.Report)
	}
	detail := fmt.Sprintf("%d bad records named", len(bad))
	switch {
	case a.Err != nil:
		detail = a.Err.Error()
	case len(bad) > 0:
		detail += ", first: " + truncate(bad[0], 200)
	}
	return report.Check{Name: "auditor names the dishonest validator's bad records", OK: len(bad) > 0, Detail: detail}
}

func orEmpty(prefix string, s []string) string {
	if len(s) == 0 {
		return ""
	}
	return prefix + strings.Join(s, ", ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
