package validator

import (
	"context"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Host slots (SPEC.md §16, §23.8): with a validator set, host rounds run
// only in host slots, drawn without the miner, and the owner of one plays
// every miner's host set at its start. Identities that share a host are
// then measured at one instant by one validator, and the mean over host
// slots (epoch.ProvenHost) credits them together at most what the host
// holds. A miner the owner cannot play in the slot's opening window gets
// a no-show record for each kind, counting 0 in the mean.

// advanceHost moves the validator's open host slot to the last one it owns
// that started at or before now; under v.mu.
func (v *Validator) advanceHost(now time.Time) {
	if v.sched == nil || v.sched.HostShare == 0 {
		return
	}
	if v.hostNext.IsZero() {
		v.hostNext = v.sched.nextHost(now)
	}
	for !v.hostNext.IsZero() && !now.Before(v.hostNext) {
		v.hostOpen, v.hostNext = v.hostNext, v.sched.nextHost(v.hostNext.Add(1))
	}
}

// hostSlotDue returns the kinds of miner p's host set in the open host
// slot once it can be played (connected, no host set running and no GPU
// round's steps, in the slot's opening window), with the announce it is
// planned from: the first of the slot's epoch, which scoring reads, so
// that an announce made later in the epoch neither adds nor drops a kind.
// ok is false until then, and for a slot already handled; one whose
// window passed is handled with a no-show unless this validator held the
// miner in it (hostSlotExcused): a GPU round's steps holding it are the
// miner's (intoOwnHostSlot keeps honest ones out). Under v.mu.
func (v *Validator) hostSlotDue(ctx context.Context, p peer.ID, e *minerEntry, now time.Time) (kinds []byte, ann *pb.MinerAnnounce, ok bool) {
	open := v.hostOpen
	if open.IsZero() || !e.hostDone.Before(open) {
		return nil, nil, false
	}
	late := now.After(open.Add(v.sched.HostSlot / 8))
	if !late && (e.hostBusy || e.busy && e.phase != roundTail || v.env.Host.Network().Connectedness(p) != network.Connected) {
		return nil, nil, false // within the window: wait for it
	}
	e.hostDone = open
	ann = v.epochAnnounce(v.env.EpochAt(open), p, e.ann, e.annRaw)
	if kinds = v.hostKinds(p, ann); len(kinds) == 0 {
		return nil, nil, false
	}
	if late {
		if end := open.Add(v.sched.HostSlot / 8); !hostSlotExcused(e, open, end) {
			v.startHostNoShow(ctx, kinds, p, e, ann, open, hostNoShowWhy(e, end))
		}
		return nil, nil, false
	}
	return kinds, ann, true
}

// hostSlotExcused says whether e's host slot opening at open, whose
// window ended at end unplayed, goes unrecorded: one of this validator's
// host sets held the miner in the window (running, or over since: past
// the window's end by this tick) within its allowance, or its GPU
// round's pings or a probe's steps within theirs did (a probe's length
// no measurement bounds, and one comes once a class and validator). A
// sized round's steps are the miner's.
func hostSlotExcused(e *minerEntry, open, end time.Time) bool {
	return (e.hostBusy || e.hostEnded.After(open)) && !hostSetHeld(e, end) ||
		e.busy && (e.phase == roundPings || e.phase == roundProbe) && !heldByMiner(e, end)
}

// startHostNoShow records a no-show for each of kinds in the host slot
// starting at slot, in the slot's epoch; under v.mu.
func (v *Validator) startHostNoShow(ctx context.Context, kinds []byte, p peer.ID, e *minerEntry, ann *pb.MinerAnnounce, slot time.Time, why string) {
	ep := v.epochs.Begin(v.env.EpochAt(slot))
	v.wg.Add(1)
	v.reserveRounds(len(kinds))
	rnd := v.round + 1
	v.round += uint64(len(kinds))
	go v.hostNoShow(ctx, kinds, ep, rnd, p, ann, slot, why)
}

// hostNoShow stores, for each kind, the record of a host round the miner
// was absent for: the challenge the validator would have sent, signed by
// its record, and the reason. It counts 0 in the mean.
func (v *Validator) hostNoShow(ctx context.Context, kinds []byte, ep, rnd uint64, p peer.ID, ann *pb.MinerAnnounce, slot time.Time, why string) {
	defer v.wg.Done()
	var recs []*store.HostRecord
	for i, k := range kinds {
		pl, err := v.hostPlan(k, p, ann, ep, rnd+uint64(i), 0, 0)
		if err != nil {
			v.env.Log.Warn("host no-show not recorded", "miner", p, "epoch", ep, "kind", k, "err", err)
			continue
		}
		rec := &store.HostRecord{Epoch: ep, Round: rnd + uint64(i), Miner: []byte(p), Validator: []byte(v.id()),
			Challenge: pl.Challenge.Encode(), Secret: pl.Secret, Verdict: store.VerdictFailed, Missed: true,
			Reason: epoch.NoShowPrefix + why + " at " + slot.UTC().Format(time.RFC3339Nano)}
		if ctx.Err() != nil {
			break
		}
		if err := v.store.PutHost(rec); err != nil {
			v.env.Log.Error("storing host evidence failed", "miner", p, "err", err)
			continue
		}
		recs = append(recs, rec)
	}
	if len(recs) > 0 {
		v.env.Log.Info("host no-show", "miner", p, "epoch", ep, "kinds", len(recs))
	}
	v.mu.Lock()
	v.epochs.End(ep)
	v.closed.Broadcast()
	v.mu.Unlock()
	v.onHosts(recs)
}

// onHosts hands stored host records to Env.OnHost, if set.
func (v *Validator) onHosts(recs []*store.HostRecord) {
	if v.env.OnHost == nil {
		return
	}
	for _, rec := range recs {
		v.env.OnHost(rec)
	}
}

// hostPlan sizes a host round of kind with miner (plan.Host) from the
// round's own draws.
func (v *Validator) hostPlan(kind byte, miner peer.ID, ann *pb.MinerAnnounce, ep, rnd uint64, rtt time.Duration, stepNs float64) (*plan.HostPlan, error) {
	var ram memwalk.Epoch
	if kind == hostround.KindRAM {
		var err error
		if ram, err = v.env.RAMEpoch(ep); err != nil {
			return nil, err
		}
	}
	return plan.Host(v.env.Config, kind, miner, ann, ram, rtt, stepNs, v.draws("host", miner, ep, rnd))
}

// The validator's own GPU round excuses the slots whose opening window
// ends in it (no record) only while it waits on this validator or the
// miner does what the plan allows: its pongs within their round trips,
// its steps within 9/8 of their planned time (stepsAllowance), its
// commitment and tiles within their transfer (setHeld). Past that the
// hold is the miner's, and the slot ends in a no-show: a miner holding a
// root, its commitment or its tiles back would otherwise pick which slots
// it skips, host slots among them. Once the last root is in, the miner's
// host is free of the round, and the owner plays a host slot beside it
// (hostSlotDue), so that nothing after the steps excuses a host slot.

// heldFetch is what a wait on the miner's commitment or tiles allows
// beyond the round trips: their transfer.
const heldFetch = time.Second

// pingTimeout bounds measureRTT's pings.
const pingTimeout = 5 * time.Second

// pingHold starts the hold of the pings that begin a round or host set
// with e at now: excused for pingEstimate, and before any round trip is
// known up to pingTimeout after the miner's first pinging here. A miner
// that answers no ping so keeps no excuse past its first. The excuse's end
// is fixed when the pinging starts, on the validator's tick, so that no
// pinging's end at the same instant changes it.
func (e *minerEntry) pingHold(now time.Time) hold {
	if e.pingedAt.IsZero() {
		e.pingedAt = now
	}
	until := now.Add(pingEstimate(e))
	if len(e.rtts) == 0 {
		until = later(until, e.pingedAt.Add(pingTimeout))
	}
	return hold{until: until}
}

// pingJitter is what pingHold allows beyond the round trips.
const pingJitter = 50 * time.Millisecond

// pingEstimate is how long an honest miner's pings take: rttPings round
// trips at twice the least of its last ones (none before the first) and
// a pingJitter.
func pingEstimate(e *minerEntry) time.Duration {
	var rtt time.Duration
	if len(e.rtts) > 0 {
		rtt = slices.Min(e.rtts)
	}
	return rttPings*2*rtt + pingJitter
}

// intoOwnHostSlot says whether a GPU round that may hold its miner until
// end, within its allowance, could hold it to the end of the opening
// window of a host slot this validator owns: such a round is not played
// (its slot is this validator's to skip, unrecorded), so that no honest
// round's steps hold a miner through a host slot, whose no-show would
// then be the validator's doing. Only a distant miner's long rounds
// reach one (SPEC §16). It is judged as of at.
func (v *Validator) intoOwnHostSlot(at, end time.Time) bool {
	if v.sched == nil || v.sched.HostShare == 0 {
		return false
	}
	next := v.sched.nextHost(at.Add(-v.sched.HostSlot / 8))
	return !next.IsZero() && !end.Before(next.Add(v.sched.HostSlot/8))
}

// stepsAllowance is how long after the challenge reaches the miner a
// round's steps may run: 9/8 of their planned time, or a probe's deadline.
func stepsAllowance(pl plan.ChallengePlan) time.Duration {
	if pl.StepTime <= 0 {
		return pl.Deadline
	}
	return time.Duration(pl.Steps) * pl.StepTime * 9 / 8
}

// expectedSteps is stepsAllowance for a sized round, and for a probe,
// whose length no measurement bounds, 9/8 of the round's nominal length.
func expectedSteps(cfg config.ValidatorConfig, ann *pb.MinerAnnounce, pl plan.ChallengePlan, rtt time.Duration) time.Duration {
	if pl.StepTime <= 0 {
		return plan.NominalRound(cfg, ann, rtt) * 9 / 8
	}
	return stepsAllowance(pl)
}

// roundPhase is where a GPU round with a miner is, for the slots whose
// window ends in it.
type roundPhase uint8

const (
	roundPings roundPhase = iota // measuring the round trip
	roundProbe                   // a probe's steps running
	roundSteps                   // a sized round's steps running
	roundTail                    // the last root in: commitment, tiles, check
)

// pingsDue is when the pings of miner's running round were due at the
// latest: the end of their hold (pingHold); zero if it has none.
func (v *Validator) pingsDue(miner peer.ID) time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.miners[miner]; e != nil && e.busy && e.phase == roundPings {
		return e.held.until
	}
	return time.Time{}
}

// overrun is how far past due the pings ended. Pings stalled past their
// allowance move the round no later: it is judged, and its steps
// excused, as if they had ended when due, so that a miner cannot push it
// into this validator's host slot (and its own slot unrecorded) or past
// the slots after it.
func overrun(due time.Time) time.Duration {
	if due.IsZero() {
		return 0
	}
	return max(0, time.Since(due))
}

// setPhase moves miner's round to phase, its wait on the miner excused
// until until (setHeld).
func (v *Validator) setPhase(miner peer.ID, phase roundPhase, until time.Time) {
	v.setHeld(miner, until)
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.miners[miner]; e != nil && e.busy {
		e.phase = phase
	}
}

// setHeld sets until when miner's round, now waiting on the miner, is
// excused (zero: it waits on this validator; hold.set).
func (v *Validator) setHeld(miner peer.ID, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.miners[miner]; e != nil && e.busy {
		e.held.set(time.Now(), until)
	}
}

// setHostHeld is setHeld for miner's host set.
func (v *Validator) setHostHeld(miner peer.ID, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.miners[miner]; e != nil && e.hostBusy {
		e.hostHeld.set(time.Now(), until)
	}
}

// hold is a round's or host set's wait on its miner: excused until until
// (zero: waiting on the validator), and late over [lateFrom, lateTo].
type hold struct{ until, lateFrom, lateTo time.Time }

// set moves the excuse to until at now. A wait that ends past its excuse
// is kept as late from then to now, so that a slot whose window ended in
// it is judged so at the next tick, after the wait is over.
func (h *hold) set(now, until time.Time) {
	if !h.until.IsZero() && now.After(h.until) {
		if h.lateFrom.IsZero() {
			h.lateFrom = h.until
		}
		h.lateTo = now
	}
	h.until = until
}

// byMiner says whether the wait, at a slot's opening window's end, was
// the miner's past its excuse.
func (h hold) byMiner(end time.Time) bool {
	if !h.lateFrom.IsZero() && end.After(h.lateFrom) && !end.After(h.lateTo) {
		return true
	}
	return !h.until.IsZero() && end.After(h.until)
}

// heldByMiner says whether e's GPU round, running when a slot's opening
// window ended at end, was then waiting on the miner past its excuse.
func heldByMiner(e *minerEntry, end time.Time) bool {
	return e.busy && e.held.byMiner(end)
}

// hostSetHeld says whether e's host set, running or over since a slot's
// opening window ended at end, then held the miner past its excuse.
func hostSetHeld(e *minerEntry, end time.Time) bool {
	return e.hostHeld.byMiner(end)
}

// hostNoShowWhy is the reason of a host no-show whose window ended at end.
func hostNoShowWhy(e *minerEntry, end time.Time) string {
	if e.busy && e.phase == roundSteps {
		return "its round's steps still running at the end of the host slot's opening window"
	}
	return noShowWhy(e, "host slot", end)
}

// noShowWhy is the reason of a no-show for a slot of what kind whose
// window ended at end.
func noShowWhy(e *minerEntry, what string, end time.Time) string {
	switch {
	case heldByMiner(e, end) || e.busy && !hostSetHeld(e, end):
		return "held its round open past its allowance (pongs, steps, commitment or tiles late) through the " + what + "'s opening window"
	case hostSetHeld(e, end):
		return "held its host set open past its allowance (pongs, stream, root or opening late) through the " + what + "'s opening window"
	}
	return "not connected in the " + what + "'s opening window"
}
