package node

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
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
// in memory, then runs Audit on it.

// PeerAuditOptions configure PeerAudit.
type PeerAuditOptions struct {
	// Validators whose weights to recompute, their evidence asked of each
	// of them directly; nil: the peer itself.
	Validators []peer.ID
	Epoch      *uint64 // recompute only this epoch (evidence up to it is fetched)
	Scoring    scoring.Config
	Consensus  consensus.Params
	Stakes     map[string]float64 // nil: equal stakes
	Log        *slog.Logger
}

// PeerAuditReport is an AuditReport of what was fetched, and what was not.
type PeerAuditReport struct {
	*AuditReport
	// Audited lists the validators whose evidence was fetched whole and
	// whose weights were therefore recomputed.
	Audited []string `json:"audited_validators"`
	// EvidenceEpochs counts the (validator, epoch) evidence sets fetched.
	EvidenceEpochs int `json:"evidence_epochs"`
	// Unfetched says, one line each, what could not be fetched.
	Unfetched []string `json:"unfetched"`
}

// NewAuditHost is a libp2p host for an auditor: a fresh identity that
// listens on nothing.
func NewAuditHost() (host.Host, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	nc := DefaultConfig().Node
	nc.Listen = nil
	return newHost(key, nc)
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
	for _, v := range vs {
		ok, err := fetchValidatorEvidence(ctx, h, v, st, opts.Epoch, rep, &findings)
		if err != nil {
			return nil, err
		}
		if ok {
			local = append(local, v)
			rep.Audited = append(rep.Audited, v.String())
		}
	}
	rep.AuditReport, err = Audit(st, AuditOptions{Epoch: opts.Epoch, Scoring: opts.Scoring, Consensus: opts.Consensus, Stakes: opts.Stakes, Local: local})
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
	y := newSyncer(h, st, log, func(peer.ID) bool { return true }, func() uint64 { return math.MaxUint64 }, deliver)
	y.deliverProof = func(_ context.Context, m *pb.EquivocationProof) { putProof(m) }
	for {
		n, err := y.syncPeer(ctx, p)
		switch {
		case errors.Is(err, errBadPeer):
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
// first record to its last (or to epoch), and reports whether all of it
// came. Evidence v does not keep is noted in rep.Unfetched; bad evidence
// is a problem of v's, named in findings (v is not audited further).
func fetchValidatorEvidence(ctx context.Context, h host.Host, v peer.ID, st *store.Store, epoch *uint64, rep *PeerAuditReport, findings *[]string) (bool, error) {
	first, last, found := uint64(0), uint64(0), false
	for ent, err := range st.EpochRecords(0, math.MaxUint64) {
		if err != nil {
			return false, err
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
		return false, nil
	}
	for e := first; e <= last; e++ {
		ev, err := FetchEvidence(ctx, h, v, e)
		switch {
		case errors.Is(err, errBadPeer):
			*findings = append(*findings, fmt.Sprintf("validator %s served bad evidence for epoch %d: %v", v, e, err))
			return false, nil
		case err != nil:
			rep.Unfetched = append(rep.Unfetched, fmt.Sprintf("%s: round evidence of epoch %d: %v", v, e, err))
			return false, nil
		}
		for _, r := range ev.Rounds {
			if err := st.PutRound(r); err != nil {
				return false, err
			}
		}
		for _, a := range ev.Announces {
			if _, err := st.PutAnnounce(a.Epoch, a.Miner, a.Envelope); err != nil {
				return false, err
			}
		}
		for _, r := range ev.Hosts {
			if err := st.PutHost(r); err != nil {
				return false, err
			}
		}
		rep.EvidenceEpochs++
	}
	return true, nil
}
