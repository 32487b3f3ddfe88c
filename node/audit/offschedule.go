package audit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/recordsync"
	"github.com/pog-network/pog/store"
)

// Off-schedule challenges (SPEC §16): a node refuses a challenge from a
// listed validator that did not own the slot it arrived in, and keeps the
// signed envelope as evidence against its signer. The peer audit fetches
// those the peer keeps for the audited epochs (recordsync.FetchOffSchedule
// checks each signature), judges each again by the schedule, and names
// their signers.

// SlotRule is the slot schedule as the challenged judge it (node.SlotRule).
type SlotRule interface {
	// Staked says whether validator owns any slot.
	Staked(validator peer.ID) bool
	// Opens says whether validator may open a round with miner at t, for
	// a GPU miner or a CPU-only one.
	Opens(miner, validator peer.ID, gpu bool, t time.Time) bool
}

// OffScheduleSigner is one signer's off-schedule challenges to the peer.
type OffScheduleSigner struct {
	Signer     string `json:"signer"`
	Challenges int    `json:"challenges"`
	Epochs     int    `json:"epochs"` // how many epochs they came in
	FirstEpoch uint64 `json:"first_epoch"`
	LastEpoch  uint64 `json:"last_epoch"`
	// Unstaked: it owns no slot, so its signature alone proves each
	// challenge off schedule; otherwise each is outside its slots' opening
	// windows at the peer's time of receipt, which is the peer's word.
	Unstaked bool `json:"unstaked"`
}

// maxOffScheduleSigners bounds the signers an audit tallies: a node keeps
// only listed validators' challenges, so more is the peer's fault.
const maxOffScheduleSigners = 1 << 10

// offScheduleTally judges the challenges the peer p keeps by rule and
// counts them by signer.
type offScheduleTally struct {
	p       peer.ID
	rule    SlotRule
	signers map[peer.ID]*OffScheduleSigner
	// ambiguous counts challenges inside their signer's window for one
	// kind of miner only: the peer's kind, which the audit does not know,
	// decides whether they were off schedule.
	ambiguous int
	// onSchedule counts challenges inside their signer's window for
	// either kind: p should not have kept them. first describes one.
	onSchedule int
	first      string
}

// add judges o, of epoch e. An error is p's fault that ends the tally.
func (t *offScheduleTally) add(e uint64, o store.OffSchedule) error {
	v, at := peer.ID(o.Signer), time.Unix(0, o.At)
	unstaked := !t.rule.Staked(v)
	if !unstaked {
		gpu, cpu := t.rule.Opens(t.p, v, true, at), t.rule.Opens(t.p, v, false, at)
		switch {
		case gpu && cpu:
			if t.onSchedule++; t.onSchedule == 1 {
				t.first = fmt.Sprintf("%s's received at %s", v, at.UTC().Format(time.RFC3339Nano))
			}
			return nil
		case gpu || cpu:
			t.ambiguous++
			return nil
		}
	}
	s := t.signers[v]
	if s == nil {
		if len(t.signers) == maxOffScheduleSigners {
			return fmt.Errorf("peer %s keeps off-schedule challenges of over %d signers", t.p, maxOffScheduleSigners)
		}
		s = &OffScheduleSigner{Signer: v.String(), FirstEpoch: e, Unstaked: unstaked}
		t.signers[v] = s
	}
	if s.Challenges == 0 || s.LastEpoch != e {
		s.Epochs++
	}
	s.Challenges++
	s.LastEpoch = e
	return nil
}

// fetchOffSchedule fetches the off-schedule challenges p keeps of the
// audited epochs (opts.Epoch, else those of the records in st) and judges
// them by the schedule of opts.Stakes, or without them of equal stakes
// for every validator with records, as the audit's consensus counts them.
// Signers of those off schedule are named in rep, the audited validators
// (audited) also in findings; bad challenges are p's fault, in findings.
func fetchOffSchedule(ctx context.Context, h host.Host, p peer.ID, st *store.Store, opts PeerAuditOptions, audited []peer.ID,
	rep *PeerAuditReport, findings *[]string) error {
	first, last, stakes, err := offScheduleScope(st, opts)
	if err != nil || last < first {
		return err
	}
	if last-first >= maxAuditEpochs {
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: off-schedule challenges of epochs %d to %d, more than %d epochs to fetch", p, first, last, maxAuditEpochs))
		return nil
	}
	rule := opts.Slots(stakes)
	if rule == nil {
		rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: off-schedule challenges: no validator set to judge them by", p))
		return nil
	}
	t := &offScheduleTally{p: p, rule: rule, signers: map[peer.ID]*OffScheduleSigner{}}
	defer func() { t.report(rep, audited, findings) }()
	for e := first; e <= last; e++ {
		got, err := recordsync.FetchOffSchedule(ctx, h, p, e)
		switch {
		case errors.Is(err, recordsync.ErrBadPeer):
			*findings = append(*findings, fmt.Sprintf("peer %s served bad off-schedule challenges for epoch %d: %v", p, e, err))
			return nil
		case errors.Is(err, recordsync.ErrEvidencePruned):
			continue
		case err != nil:
			rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: off-schedule challenges of epoch %d: %v", p, e, err))
			return nil
		}
		rep.OffScheduleEpochs++
		for _, o := range got {
			if err := t.add(e, o); err != nil {
				*findings = append(*findings, err.Error())
				return nil
			}
		}
	}
	return nil
}

// offScheduleScope is the epochs whose off-schedule challenges the audit
// fetches (none: last < first) and the stakes it judges them by.
func offScheduleScope(st *store.Store, opts PeerAuditOptions) (first, last uint64, stakes map[string]float64, err error) {
	first, last, stakes = math.MaxUint64, 0, opts.Stakes
	if stakes == nil {
		stakes = map[string]float64{}
	}
	for ent, err := range st.EpochRecords(0, math.MaxUint64) {
		if err != nil {
			return 0, 0, nil, err
		}
		first, last = min(first, ent.Epoch), max(last, ent.Epoch)
		if opts.Stakes == nil {
			stakes[peer.ID(ent.Validator).String()] = 1
		}
	}
	if opts.Epoch != nil {
		first, last = *opts.Epoch, *opts.Epoch
	}
	return first, last, stakes, nil
}

// report puts the tally in rep, each signer among the audited validators
// also as a finding, as are challenges p kept on schedule.
func (t *offScheduleTally) report(rep *PeerAuditReport, audited []peer.ID, findings *[]string) {
	rep.OffScheduleAmbiguous = t.ambiguous
	if t.onSchedule > 0 {
		*findings = append(*findings, fmt.Sprintf("peer %s kept challenges that were inside their signer's opening window as off schedule (%d; the first %s)",
			t.p, t.onSchedule, t.first))
	}
	for _, v := range slices.Sorted(maps.Keys(t.signers)) {
		s := *t.signers[v]
		if !slices.Contains(audited, v) {
			rep.OffScheduleOthers = append(rep.OffScheduleOthers, s)
			continue
		}
		rep.OffSchedule = append(rep.OffSchedule, s)
		*findings = append(*findings, fmt.Sprintf("validator %s challenged %s off schedule: %s", v, t.p, s.Describe()))
	}
}

// Describe says how many challenges, when, and what proves them off
// schedule.
func (s OffScheduleSigner) Describe() string {
	var b strings.Builder
	if fmt.Fprintf(&b, "%d challenge", s.Challenges); s.Challenges != 1 {
		b.WriteByte('s')
	}
	if s.Epochs == 1 {
		fmt.Fprintf(&b, " in epoch %d; ", s.FirstEpoch)
	} else {
		fmt.Fprintf(&b, " in %d epochs, %d to %d; ", s.Epochs, s.FirstEpoch, s.LastEpoch)
	}
	if s.Unstaked {
		b.WriteString("it owns no slot, so its signatures prove it")
	} else {
		b.WriteString("each outside its slots' opening windows at the peer's time of receipt")
	}
	return b.String()
}
