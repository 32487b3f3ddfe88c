package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/scoring"
)

// peerAuditTimeout bounds a whole `pog audit --peer`.
const peerAuditTimeout = 10 * time.Minute

// runPeerAudit is `pog audit --peer`: it audits a running node's records
// and a validator's evidence without a local store (node.PeerAudit), and
// names the signers of the off-schedule challenges the node keeps. A home,
// if given, supplies the genesis stakes and round targets (its store is
// not read); otherwise stakes are equal and round targets the defaults.
// It exits 0 only if every check passed (an audited validator that
// challenged off schedule fails one) and the validator's evidence came
// whole.
func runPeerAudit(addr, validator, home string, epoch int64, jsonOut bool, stdout, stderr io.Writer) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "pog audit: "+format+"\n", args...)
		return code
	}
	a, err := ma.NewMultiaddr(addr)
	if err != nil {
		return fail(2, "--peer %q: %v", addr, err)
	}
	info, err := peer.AddrInfoFromP2pAddr(a)
	if err != nil {
		return fail(2, "--peer %q: %v (want a multiaddr ending in /p2p/PEER-ID)", addr, err)
	}
	opts, code, err := peerAuditOptions(validator, home, epoch)
	if err != nil {
		return fail(code, "%v", err)
	}
	h, err := node.NewAuditHost()
	if err != nil {
		return fail(1, "libp2p host: %v", err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), peerAuditTimeout)
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, peerDialTimeout)
	err = h.Connect(cctx, *info)
	ccancel()
	if err != nil {
		return fail(1, "cannot reach %s: %v", addr, err)
	}
	rep, err := audit.PeerAudit(ctx, h, info.ID, opts)
	if err != nil {
		return fail(1, "%v", err)
	}
	if jsonOut {
		writeJSON(stdout, rep)
	} else {
		printPeerAudit(stdout, info.ID, rep)
	}
	code = peerAuditVerdict(stderr, rep)
	if code == 0 && !jsonOut {
		fmt.Fprintln(stdout, "audit          OK")
	}
	return code
}

// peerDialTimeout bounds reaching the audited peer, a small part of
// peerAuditTimeout.
const peerDialTimeout = 30 * time.Second

// peerAuditOptions turns the flags into the audit's options. On failure it
// also returns the exit code: 2 for a malformed --validator, the config's
// own code for an unreadable home.
func peerAuditOptions(validator, home string, ep int64) (audit.PeerAuditOptions, int, error) {
	opts := audit.PeerAuditOptions{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams()}
	if validator != "" {
		v, err := peer.Decode(validator)
		if err != nil {
			return opts, 2, fmt.Errorf("--validator %q: %v", validator, err)
		}
		opts.Validators = []peer.ID{v}
	}
	if ep >= 0 {
		e := uint64(ep)
		opts.Epoch = &e
	}
	cfg := config.DefaultConfig()
	if home != "" { // only its genesis stakes and round targets: its store may be in use
		var err error
		if cfg, err = config.LoadConfig(home); err != nil {
			return opts, exitCode(err), err
		}
		if opts.Stakes, err = epoch.StakeSet(home, cfg); err != nil {
			return opts, exitCode(err), err
		}
	}
	// Off-schedule challenges are judged by the schedule nodes of cfg
	// draw, of the stakes the audit settles on.
	opts.Slots = func(stakes map[string]float64) audit.SlotRule { return node.SlotRule(stakes, cfg) }
	return opts, 0, nil
}

// printPeerAudit writes the report's table: what was fetched and checked.
func printPeerAudit(stdout io.Writer, id peer.ID, rep *audit.PeerAuditReport) {
	fmt.Fprintf(stdout, "peer           %s\nvalidators     %s (evidence of %d epochs fetched)\n", id, orNone(rep.Audited), rep.EvidenceEpochs)
	fmt.Fprintf(stdout, "epoch records  %d (%d recomputed from evidence)\nround records  %d (%d proofs re-verified)\nequivocations  %d proofs checked\nconsensus      %d epochs recomputed\n",
		rep.EpochRecords, rep.Recomputed, rep.Rounds, rep.ProofsVerified, rep.Equivocations, len(rep.ConsensusHashes))
	for _, v := range rep.Audited {
		if b, ok := rep.PrunedBelow[v]; ok {
			fmt.Fprintf(stdout, "pruned         %s keeps evidence from epoch %d; weights recomputed from its checkpoint of epoch %d\n", v, b, b-1)
		}
	}
	if rep.Pruned > 0 {
		fmt.Fprintf(stdout, "               %d records of pruned epochs checked without their evidence\n", rep.Pruned)
	}
	printOffSchedule(stdout, rep)
	for _, u := range rep.Unfetched {
		fmt.Fprintf(stdout, "not fetched    %s\n", u)
	}
}

// printOffSchedule writes what the off-schedule challenges the peer keeps
// show: each signer, the audited validators first.
func printOffSchedule(stdout io.Writer, rep *audit.PeerAuditReport) {
	named := "no signer named"
	if n := len(rep.OffSchedule) + len(rep.OffScheduleOthers); n > 0 {
		named = fmt.Sprintf("%d signers named", n)
	}
	fmt.Fprintf(stdout, "off schedule   %s (the challenges the peer keeps of %d epochs)", named, rep.OffScheduleEpochs)
	if rep.OffScheduleAmbiguous > 0 {
		fmt.Fprintf(stdout, " (%d more on schedule for one kind of miner only: not counted)", rep.OffScheduleAmbiguous)
	}
	fmt.Fprintln(stdout)
	for _, s := range rep.OffSchedule {
		fmt.Fprintf(stdout, "               %s (audited): %s\n", s.Signer, s.Describe())
	}
	for _, s := range rep.OffScheduleOthers {
		fmt.Fprintf(stdout, "               %s: %s\n", s.Signer, s.Describe())
	}
}

// peerAuditVerdict reports the audit's failures on stderr and returns the
// exit code: 1 if a check failed or no validator's evidence came whole.
func peerAuditVerdict(stderr io.Writer, rep *audit.PeerAuditReport) int {
	code := 0
	if len(rep.Problems) > 0 {
		fmt.Fprintf(stderr, "pog audit: FAILED: %s\n", rep.Problems[0])
		for _, p := range rep.Problems[1:] {
			fmt.Fprintf(stderr, "  also: %s\n", p)
		}
		code = 1
	}
	if len(rep.Audited) == 0 {
		fmt.Fprintln(stderr, "pog audit: no validator's round evidence could be fetched whole, so no weight was recomputed")
		code = 1
	}
	return code
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
