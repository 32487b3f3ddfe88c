package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/recordsync"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// The public audit (`pog audit --peer`, SPEC §22.3): an auditor with no
// role and no store fetches a running node's epoch records by record sync
// and a validator's round evidence by the evidence protocol into a store
// in memory, then runs Audit on it. It also fetches the off-schedule
// challenges the node keeps (offschedule.go) and names their signers.

// PeerAuditOptions configure PeerAudit.
type PeerAuditOptions struct {
	// Validators whose weights to recompute, their evidence asked of each
	// of them directly; nil: the peer itself.
	Validators []peer.ID
	Epoch      *uint64 // recompute only this epoch (evidence up to it is fetched)
	Scoring    scoring.Config
	Consensus  consensus.Params
	Stakes     map[string]float64 // nil: equal stakes
	// Slots is the slot rule of a validator set at stakes (node.SlotRule
	// with the network's round targets), by which the off-schedule
	// challenges the peer keeps are judged; nil: they are not fetched.
	Slots func(stakes map[string]float64) SlotRule
	Log   *slog.Logger
}

// PeerAuditReport is a Report of what was fetched, and what was not.
type PeerAuditReport struct {
	*Report
	// Audited lists the validators whose evidence was fetched whole and
	// whose weights were therefore recomputed.
	Audited []string `json:"audited_validators"`
	// EvidenceEpochs counts the (validator, epoch) evidence sets fetched.
	EvidenceEpochs int `json:"evidence_epochs"`
	// PrunedBelow is, for each audited validator that pruned evidence,
	// its first epoch with evidence: earlier records are checked without
	// it, and weights recomputed from its checkpoint before that epoch on.
	PrunedBelow map[string]uint64 `json:"pruned_below,omitempty"`
	// Unfetched says, one line each, what could not be fetched.
	Unfetched []string `json:"unfetched"`
	// OffScheduleEpochs counts the epochs whose off-schedule challenges
	// the peer keeps were fetched and judged (SPEC §16). OffSchedule names
	// the audited validators that challenged the peer off schedule (each
	// also a problem), OffScheduleOthers the other signers, and
	// OffScheduleAmbiguous counts the challenges in their signer's window
	// for one kind of miner only, which name no one.
	OffScheduleEpochs    int                 `json:"off_schedule_epochs"`
	OffSchedule          []OffScheduleSigner `json:"off_schedule"`
	OffScheduleOthers    []OffScheduleSigner `json:"off_schedule_others"`
	OffScheduleAmbiguous int                 `json:"off_schedule_ambiguous"`
}

// PeerAudit audits, through h, the records peer p holds and the evidence
// of opts.Validators. An error means the audit could not run at all (p
// unreachable, or serving bad records); a bad validator shows in Problems.
func PeerAudit(ctx context.Context, h host.Host, p peer.ID, opts PeerAuditOptions) (*PeerAuditReport, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	st, err := store.Open("audit", store.Options{FS: vfs.NewMem()})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var findings []string // problems found while fetching
	if err := fetchRecords(ctx, h, p, st, opts.Log); err != nil {
		return nil, err
	}
	rep := &PeerAuditReport{}
	vs := opts.Validators
	if vs == nil {
		vs = []peer.ID{p}
	}
	local := []peer.ID{}
	bounds := map[peer.ID]uint64{}
	for _, v := range vs {
		from, ok, err := fetchValidatorEvidence(ctx, h, v, st, opts.Epoch, rep, &findings)
		if err != nil {
			return nil, err
		}
		if ok {
			local = append(local, v)
			rep.Audited = append(rep.Audited, v.String())
			if from > 0 {
				bounds[v] = from
			}
		}
	}
	if opts.Slots != nil {
		if err := fetchOffSchedule(ctx, h, p, st, opts, vs, rep, &findings); err != nil {
			return nil, err
		}
	}
	for v, from := range bounds {
		if rep.PrunedBelow == nil {
			rep.PrunedBelow = map[string]uint64{}
		}
		rep.PrunedBelow[v.String()] = from
	}
	rep.Report, err = Audit(st, Options{Epoch: opts.Epoch, Scoring: opts.Scoring, Consensus: opts.Consensus, Stakes: opts.Stakes,
		Local: local, EvidenceFrom: bounds})
	if err != nil {
		return nil, err
	}
	rep.Problems = append(findings, rep.Problems...)
	return rep, nil
}

// fetchRecords syncs every record and equivocation proof p holds into st,
// pass after pass until one stores nothing new. Two records of one
// validator for one epoch are stored as a proof, which the audit checks
// and consensus applies (SPEC §20): a fact, not a fault of p's.
func fetchRecords(ctx context.Context, h host.Host, p peer.ID, st *store.Store, log *slog.Logger) error {
	var failed error
	putProof := func(m *pb.EquivocationProof) {
		eq, err := protocol.CheckEquivocation(m)
		if err != nil {
			return
		}
		b, _ := proto.Marshal(m)
		if _, err := st.PutEquivocation(eq.Epoch, []byte(eq.Validator), b); err != nil {
			failed = err
		}
	}
	deliver := func(_ context.Context, o *protocol.Opened) {
		e := o.Msg.(*pb.EpochRecord).Epoch
		err := st.PutEpochRecord(e, []byte(o.Author), o.Raw)
		if errors.Is(err, store.ErrExists) {
			held, rerr := st.EpochRecord(e, []byte(o.Author))
			if rerr == nil {
				if m, perr := protocol.NewEquivocationProof(held, o.Raw); perr == nil {
					putProof(m)
				}
			}
			return
		}
		if err != nil {
			failed = err
		}
	}
	y := recordsync.New(h, st, log, func(peer.ID) bool { return true }, func() uint64 { return math.MaxUint64 }, deliver)
	y.DeliverProof = func(_ context.Context, m *pb.EquivocationProof) { putProof(m) }
	for {
		n, err := y.SyncPeer(ctx, p)
		switch {
		case errors.Is(err, recordsync.ErrBadPeer):
			return fmt.Errorf("peer %s served bad records: %w", p, err)
		case err != nil:
			return fmt.Errorf("fetching records from %s: %w", p, err)
		case failed != nil:
			return failed
		case n == 0:
			return nil
		}
	}
}

// fetchValidatorEvidence fetches v's evidence of every epoch from its
// first record to its last (or to epoch; at most maxAuditEpochs), and
// reports whether all of it that v keeps came. Epochs v pruned (SPEC §21;
// it may prune more while the fetch runs) are skipped: from is then the
// first epoch after them, whose scorer checkpoint before it is fetched
// into st for the audit to resume from (v lacking it is a finding); else
// from is 0. Other evidence v does not serve is noted in rep.Unfetched; bad
// evidence is a problem of v's, named in findings (v is not audited
// further).
func fetchValidatorEvidence(ctx context.Context, h host.Host, v peer.ID, st *store.Store, epoch *uint64, rep *PeerAuditReport, findings *[]string) (uint64, bool, error) {
	first, last, found := uint64(0), uint64(0), false
	for ent, err := range st.EpochRecords(0, math.MaxUint64) {
		if err != nil {
			return 0, false, err
		}
		if peer.ID(ent.Validator) == v && (epoch == nil || ent.Epoch <= *epoch) {
			if !found {
				first = ent.Epoch
			}
			last, found = ent.Epoch, true
		}
	}
	if !found {
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: the peer holds no epoch record of it", v))
		return 0, false, nil
	}
	if last-first >= maxAuditEpochs || last == math.MaxUint64 {
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: records of epochs %d to %d, more than %d epochs to fetch", v, first, last, maxAuditEpochs))
		return 0, false, nil
	}
	from := uint64(0)
	for e := first; e <= last; e++ {
		ev, err := recordsync.FetchEvidence(ctx, h, v, e)
		switch {
		case errors.Is(err, recordsync.ErrBadPeer):
			*findings = append(*findings, fmt.Sprintf("validator %s served bad evidence for epoch %d: %v", v, e, err))
			return 0, false, nil
		case errors.Is(err, recordsync.ErrEvidencePruned):
			from = e + 1
			continue
		case err != nil:
			rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: round evidence of epoch %d: %v", v, e, err))
			return 0, false, nil
		}
		if err := putEvidence(st, ev); err != nil {
			return 0, false, err
		}
		rep.EvidenceEpochs++
	}
	switch {
	case from == 0:
		return 0, true, nil
	case from > last:
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: it pruned the evidence of every epoch it has records for (to %d)", v, last))
		return 0, false, nil
	}
	cp, ok, err := recordsync.FetchCheckpoint(ctx, h, v, from-1)
	switch {
	case errors.Is(err, recordsync.ErrBadPeer):
		*findings = append(*findings, fmt.Sprintf("validator %s served a bad scorer checkpoint for epoch %d: %v", v, from-1, err))
		return 0, false, nil
	case err != nil:
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: scorer checkpoint of epoch %d: %v", v, from-1, err))
		return 0, false, nil
	case !ok:
		*findings = append(*findings, noCheckpoint(v, from))
		return 0, false, nil
	}
	if err := st.PutCheckpoint(cp); err != nil {
		return 0, false, err
	}
	return from, true, nil
}

// maxAuditEpochs bounds the epochs of one validator's evidence a public
// audit fetches: 2^16 epochs are nine years of 72-minute epochs.
const maxAuditEpochs = 1 << 16

// putEvidence stores one epoch's fetched evidence.
func putEvidence(st *store.Store, ev *recordsync.EpochEvidence) error {
	for _, r := range ev.Rounds {
		if err := st.PutRound(r); err != nil {
			return err
		}
	}
	for _, a := range ev.Announces {
		if _, err := st.PutAnnounce(a.Epoch, a.Miner, a.Envelope); err != nil {
			return err
		}
	}
	for _, r := range ev.Hosts {
		if err := st.PutHost(r); err != nil {
			return err
		}
	}
	return nil
}
