package testnet

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/testnet/report"
)

// The late joiner: a node started two full epochs after the
// network, knowing one validator only. It runs as a miner (the only role
// without stake) but is reported as an observer, outside the ranking: it
// cannot match miners that were measured all along. Gossip brings it the
// records published after it joined; record sync must bring every earlier
// one within one epoch, after which its consensus equals a validator's and
// its home passes pog audit.

// lateJoinName is the late joiner's node name; observerRole its role in
// the report.
const (
	lateJoinName = "late-joiner"
	observerRole = "observer"
)

type recordKey struct {
	epoch     uint64
	validator peer.ID
}

// lateJoin is what the late joiner's check needs.
type lateJoin struct {
	m       *member
	epoch   uint64 // the epoch it joined at the start of
	want    int    // records its peer held of earlier epochs
	lacking []recordKey
	checked bool // the deadline passed while the network ran
	err     error
}

// lateJoiner starts the late joiner at the start of epoch at, then, at the
// end of that epoch, notes which earlier records it still lacks.
func (r *run) lateJoiner(ctx context.Context, at uint64) {
	defer r.wg.Done()
	if !waitUntil(ctx, epochStart(at, r.cfg.EpochLength)) {
		return
	}
	var peerOf *member
	for _, m := range r.members {
		if m.info.Role == string(node.RoleValidator) && m.info.Adversary == "" {
			peerOf = m
			break
		}
	}
	lj := &lateJoin{epoch: at}
	defer func() {
		r.mu.Lock()
		r.late = lj
		r.mu.Unlock()
	}()
	want := map[recordKey]bool{}
	for ent, err := range peerOf.store.EpochRecords(0, at-1) {
		if err != nil {
			lj.err = err
			return
		}
		want[recordKey{ent.Epoch, peer.ID(ent.Validator)}] = true
	}
	lj.want = len(want)
	m, err := r.newMember(ctx, lateJoinName, node.RoleMiner, minerSpec{profile: r.minerSpecs()[0].profile}, nil)
	if err != nil {
		lj.err = err
		return
	}
	lj.m = m
	r.mu.Lock()
	m.info.Role = observerRole
	r.mu.Unlock()
	if err := m.node.Connect(ctx, peerOf.node.Addrs()...); err != nil {
		lj.err = err
		return
	}
	r.progress("%s started in epoch %d, connected to %s only", lateJoinName, at, peerOf.info.Name)
	if !waitUntil(ctx, epochStart(at+1, r.cfg.EpochLength)) {
		return
	}
	for k := range want {
		if _, err := m.store.EpochRecord(k.epoch, []byte(k.validator)); err != nil {
			lj.lacking = append(lj.lacking, k)
		}
	}
	lj.checked = true
	r.progress("%s: lacks %d of %d earlier records one epoch after joining", lateJoinName, len(lj.lacking), lj.want)
}

// lateJoinChecks reports the late joiner's catch-up, compares its
// consensus of epochs [from, to] with validator v's, and audits its home.
// It runs before the stores close.
func (r *run) lateJoinChecks(v *member, from, to uint64, sc audit.Options) []report.Check {
	r.mu.Lock()
	lj := r.late
	r.mu.Unlock()
	if lj == nil {
		return nil
	}
	name := "late joiner holds every earlier record within one epoch"
	switch {
	case lj.err != nil:
		return []report.Check{{Name: name, OK: false, Detail: lj.err.Error()}}
	case !lj.checked:
		return []report.Check{{Name: name, OK: false, Detail: "the run ended before one epoch had passed"}}
	}
	catchup := fmt.Sprintf("joined at the start of epoch %d; at its end it lacked %d of the %d records its peer held of earlier epochs",
		lj.epoch, len(lj.lacking), lj.want)
	for i, k := range lj.lacking {
		if i == 0 {
			catchup += ":"
		}
		catchup += fmt.Sprintf(" %s's of %d", r.nameOf(k.validator.String()), k.epoch)
	}
	out := []report.Check{{Name: name, OK: len(lj.lacking) == 0 && lj.want > 0, Detail: catchup}}
	out = append(out, r.sameConsensus(lj.m, v, from, to))
	rep, err := audit.Audit(lj.m.store, sc)
	ok := err == nil && len(rep.Problems) == 0
	var detail string
	switch {
	case err != nil:
		detail = err.Error()
	case len(rep.Problems) > 0:
		detail = truncate(rep.Problems[0], 200)
	default:
		detail = fmt.Sprintf("%d epoch records checked", rep.EpochRecords)
	}
	return append(out, report.Check{Name: "pog audit passes on the late joiner's home", OK: ok, Detail: detail})
}

// sameConsensus compares m's consensus hash with v's for epochs [from, to].
func (r *run) sameConsensus(m, v *member, from, to uint64) report.Check {
	name := "late joiner computes the same consensus as " + v.info.Name
	for e := from; e <= to; e++ {
		a, err := epoch.Consensus(v.store, e, nil, consensus.DefaultParams())
		if err != nil {
			return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("%s, epoch %d: %v", v.info.Name, e, err)}
		}
		b, err := epoch.Consensus(m.store, e, nil, consensus.DefaultParams())
		if err != nil {
			return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("epoch %d: %v", e, err)}
		}
		if a.Hash() != b.Hash() {
			return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("epoch %d: %x, %s has %x", e, b.Hash(), v.info.Name, a.Hash())}
		}
	}
	return report.Check{Name: name, OK: true, Detail: fmt.Sprintf("epochs %d–%d", from, to)}
}

// auditOptions is how summaries audit a store.
func (r *run) auditOptions() audit.Options {
	return audit.Options{Scoring: r.scoringConfig(), Consensus: consensus.DefaultParams()}
}

func epochStart(e uint64, l time.Duration) time.Time { return time.Unix(0, int64(e)*int64(l)) }

// waitUntil blocks until t, or returns false if ctx ends first.
func waitUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
