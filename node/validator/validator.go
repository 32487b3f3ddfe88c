package validator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
	"lukechampine.com/blake3"
)

// Validator challenges announced miners at random times, plays each round
// (protocol/round) over a direct stream, and stores the evidence.
type Validator struct {
	env    Env
	store  *store.Store
	mu     sync.Mutex
	closed *sync.Cond // signalled when a round of some epoch ends
	miners map[peer.ID]*minerEntry
	round  uint64
	marked uint64 // the store's round mark: round never passes it
	epochs round.Epochs
	// seed keys each miner's random draws (minerRand): secret, and the
	// same on every run of this key.
	seed    [32]byte
	started int64 // unix ns: a restart's draws differ from before it
	wg      sync.WaitGroup
	scorer  *epoch.Scorer
	sched   *SlotSchedule // nil: random pauses (schedule.go)
	// admitted are the miners scheduled (admission.go), as of
	// admittedAt; nil: all. admitSeed and weights are from the
	// validator's latest record.
	admitted   map[peer.ID]bool
	admittedAt time.Time
	admitSeed  [32]byte
	weights    map[peer.ID]float64
	// hostOpen is the start of the last host slot self owns that has
	// started (hostslot.go), hostNext the next one's.
	hostOpen, hostNext time.Time
	// stopAt: from then on no round starts and no passed slot is
	// recorded (StopRoundsAt); zero: never.
	stopAt time.Time
}

type minerEntry struct {
	ann    *pb.MinerAnnounce // the latest, annRaw its envelope
	annRaw []byte
	seen   time.Time
	// busy: a GPU round of this validator's runs with the miner, in
	// phase; hostBusy: a host set does. A host set may start once the
	// round's steps are done (hostslot.go).
	busy, hostBusy bool
	phase          roundPhase
	// hostEnded is when its last host set ended.
	hostEnded time.Time
	// held: the GPU round's wait on the miner (its pongs, its steps, its
	// commitment or tiles), excused while within its allowance
	// (setHeld); hostHeld: the host set's (its pongs, stream, roots and
	// openings; setHostHeld), kept after the set until the next starts.
	held, hostHeld hold
	// next: no round before this (under a slot schedule, the next owned
	// slot); served: the owned slot the last round started in. counted:
	// under a slot schedule, a new entry's owned slots end in a record
	// from then on, once (slotsFrom), though its announce came later.
	next, served, counted time.Time
	// tflops is the speed to size the next round of a class with
	// (plan.SizingTFLOPS); none: probe next. floor is the last verified
	// sustained throughput, which the deadlines assume.
	tflops, floor map[proof.Precision]float64
	// classes counts this epoch's rounds per class (epoch: which epoch).
	epoch   uint64
	classes map[proof.Precision]int
	// Without a slot schedule, hostAt is when the next of the hostSets
	// host sets left in epoch hostAtEpoch−1 may start. With one, hostDone
	// is the start of the last host slot handled for the miner.
	hostAtEpoch uint64
	hostAt      time.Time
	hostSets    int
	hostDone    time.Time
	// hostStepNs is each kind's step time in the miner's last verified
	// host round, which sizes a distant miner's next (plan.ExpectedStepNs).
	hostStepNs [hostround.KindPlot + 1]float64
	// rnd draws the miner's pauses and host times (minerRand).
	rnd *mrand.Rand
	// rtts are the round trips measured before its last rttWindow
	// rounds and host sets, which size the next (sizingRTT); pingedAt
	// is when its first pinging started (pingHold).
	rtts     []time.Duration
	pingedAt time.Time
	// firstEpoch is the epoch of its first announce here, verified 1 +
	// the epoch of its last verified round (0: none), and rank its
	// admission rank under rankSeed (admission.go).
	firstEpoch, verified uint64
	rank, rankSeed       [32]byte
	ranked               bool
}

// pick chooses the class of the miner's next round in epoch e.
func (e *minerEntry) pick(shares []plan.ClassShare, epoch uint64) proof.Precision {
	if e.classes == nil || e.epoch != epoch {
		e.epoch, e.classes = epoch, map[proof.Precision]int{}
	}
	p := plan.NextPrecision(shares, e.classes)
	e.classes[p]++
	return p
}

// New is the validator of the node env describes; Start starts it.
func New(env Env) *Validator {
	c := env.Config
	v := &Validator{env: env, store: env.Store, miners: map[peer.ID]*minerEntry{}, started: time.Now().UnixNano(),
		scorer: &epoch.Scorer{Store: env.Store, Validator: env.Host.ID(), Config: env.Scoring,
			Resume: true, Checkpoint: true, Scored: env.EpochScores},
		sched: NewSlotSchedule(env.Host.ID(), env.Stakes, c.Network.Validators, c.Validator)}
	raw, _ := env.Key.Raw() // the node checked the key
	blake3.DeriveKey(v.seed[:], "pog 2026-12-02 validator draws v1", raw)
	v.closed = sync.NewCond(&v.mu)
	return v
}

func (v *Validator) id() peer.ID { return v.env.Host.ID() }

// OnAnnounce notes a miner's announce o, which gossip delivered at at.
func (v *Validator) OnAnnounce(at time.Time, o *protocol.Opened) {
	// The first announce of each epoch is the hardware evidence scoring uses.
	if _, err := v.store.PutAnnounce(v.env.EpochAt(at), []byte(o.Author), o.Raw); err != nil {
		v.env.Log.Error("storing announce failed", "miner", o.Author, "err", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.miners[o.Author]
	if e == nil {
		e = &minerEntry{tflops: map[proof.Precision]float64{}, floor: map[proof.Precision]float64{}, firstEpoch: v.env.EpochAt(at),
			hostDone: v.hostOpen, // a host slot open before it came is not its
			counted:  v.slotsFrom(at)}
		v.miners[o.Author] = e
		v.env.Log.Info("miner joined", "miner", o.Author)
	}
	e.ann, e.annRaw, e.seen = o.Msg.(*pb.MinerAnnounce), o.Raw, at
}

// Announce is miner p's latest announce; nil if it has none.
func (v *Validator) Announce(p peer.ID) *pb.MinerAnnounce {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.miners[p]; e != nil {
		return e.ann
	}
	return nil
}

// lastRound is the highest round validator self stored in epochs e−1 to
// e+1: a restarted validator numbers its rounds above it, so it never
// reuses a number (and never has a record refused as existing).
func lastRound(st *store.Store, self peer.ID, e uint64) (uint64, error) {
	var last uint64
	for r, err := range st.Rounds(max(e, 1)-1, e+1) {
		if err != nil {
			return 0, err
		}
		if peer.ID(r.Validator) == self {
			last = max(last, r.Round)
		}
	}
	return lastHostRound(st, self, e, last)
}

// Start starts the validator's rounds and epoch closes, until ctx ends.
func (v *Validator) Start(ctx context.Context) {
	last, err := lastRound(v.store, v.id(), v.env.EpochAt(time.Now()))
	if err != nil {
		v.env.Log.Error("reading stored rounds failed; numbering from the clock", "err", err)
		last = uint64(time.Now().UnixMilli())
	}
	mark, err := v.store.RoundMark()
	if err != nil {
		v.env.Log.Error("reading the round mark failed; numbering from the clock", "err", err)
		mark = uint64(time.Now().UnixMilli())
	}
	v.round, v.marked = max(last, mark), max(last, mark)
	if err := v.loadLatestRecord(v.env.EpochAt(time.Now())); err != nil {
		v.env.Log.Error("reading this validator's latest record failed; admitting without it", "err", err)
	}
	v.env.WG.Add(2)
	go v.epochLoop(ctx)
	go func() {
		defer v.env.WG.Done()
		// The offset staggers validators' first rounds.
		select {
		case <-ctx.Done():
			return
		case <-time.After(v.env.Config.Validator.RoundOffset.Duration):
		}
		t := time.NewTicker(v.tick())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				v.wg.Wait()
				return
			case <-t.C:
				v.startRounds(ctx)
			}
		}
	}()
}

// StopRoundsAt makes the validator start no round, GPU or host, and record
// no passed slot from t on; rounds under way finish, and epochs still
// close. A validator leaving the set stops so at an epoch's end, plus a
// slot or two for its last slots' windows to pass; a testnet stops its
// validators so when its last epoch has ended, and the wait for that
// epoch's records costs no rounds that no check judges.
func (v *Validator) StopRoundsAt(t time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.stopAt = t
}

// tick is how often the validator looks for rounds to start: every
// round_interval, and under a slot schedule at least twice in each slot's
// startable first eighth.
func (v *Validator) tick() time.Duration {
	cfg := v.env.Config.Validator
	d := cfg.RoundInterval.Duration
	if v.sched != nil {
		slot := v.sched.ForMiner(min(cfg.RoundTarget.Duration, cfg.RoundTargetCPU.Duration)).Slot
		d = min(d, slot/16)
	}
	return d
}

// startRounds starts a round with every miner announced within the TTL,
// connected, idle and past its random pause (or in its owned slot), and
// records a no-show for each owned slot that passed unserved. Miners are
// visited in peer ID order, so the rounds of one tick are numbered (and
// their draws keyed) the same way every time.
func (v *Validator) startRounds(ctx context.Context) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.stopAt.IsZero() && !now.Before(v.stopAt) {
		return
	}
	v.admit(now)
	v.advanceHost(now)
	for _, p := range slices.Sorted(maps.Keys(v.miners)) {
		e := v.miners[p]
		if v.left(e, now) {
			delete(v.miners, p)
			v.env.Log.Info("miner left (no announce)", "miner", p)
			continue
		}
		if v.admitted != nil && !v.admitted[p] {
			e.next, e.hostDone = time.Time{}, v.hostOpen // no slots, so no no-shows, until admitted
			continue
		}
		if v.sched != nil {
			v.slotPassed(ctx, p, e, now)
			if kinds, ann, ok := v.hostSlotDue(ctx, p, e, now); ok {
				v.startHost(ctx, kinds, v.env.EpochAt(v.hostOpen), p, e, ann)
				continue
			}
		}
		if v.env.Host.Network().Connectedness(p) != network.Connected || e.busy || e.hostBusy {
			// Announced through a relay: rounds run over a direct
			// stream, so wait until this node is connected to the miner.
			continue
		}
		if v.sched == nil {
			if kinds := v.hostDue(e, p, v.env.EpochAt(now), now); len(kinds) > 0 {
				v.startHost(ctx, kinds, v.env.EpochAt(now), p, e, e.ann)
				continue
			}
		}
		if v.sched != nil && !v.sched.due(p, e, v.env.Config.Validator, now) || v.sched == nil && now.Before(e.next) {
			// Not its owned slot, or in its random pause (host sets,
			// short measurements, may run in that; a GPU round waits).
			continue
		}
		if v.intoOwnHostSlot(now, now.Add(pingEstimate(e))) {
			e.served = e.next // this validator's to skip, unrecorded
			continue
		}
		epoch := v.epochs.Begin(v.env.EpochAt(now))
		e.busy, e.phase, e.served, e.held = true, roundPings, e.next, e.pingHold(now)
		v.wg.Add(1)
		v.reserveRounds(1)
		v.round++
		prec := e.pick(plan.ClassShares(v.env.Scoring), epoch)
		go v.play(ctx, epoch, v.round, p, v.epochAnnounce(epoch, p, e.ann, e.annRaw), prec, e.tflops[prec], e.floor[prec])
	}
}

// startHost starts the host set kinds with miner p in epoch ep, planned
// from ann; under v.mu.
func (v *Validator) startHost(ctx context.Context, kinds []byte, ep uint64, p peer.ID, e *minerEntry, ann *pb.MinerAnnounce) {
	epoch := v.epochs.Begin(ep)
	e.hostBusy, e.hostHeld = true, e.pingHold(time.Now())
	v.wg.Add(1)
	v.reserveRounds(len(kinds))
	go v.playHost(ctx, kinds, epoch, v.round+1, p, ann)
	v.round += uint64(len(kinds)) // one round number per host record
}

// left says whether a miner's entry goes: not announced within the TTL,
// and under a slot schedule not in the epoch of its last announce either,
// whose owned slots all end in a record (a miner that announces and goes
// is scored as absent for the rest of the epoch).
func (v *Validator) left(e *minerEntry, now time.Time) bool {
	if now.Sub(e.seen) <= v.env.Config.Validator.MinerTTL.Duration {
		return false
	}
	return v.sched == nil || v.env.EpochAt(now) > v.env.EpochAt(e.seen)
}

// slotsFrom is when the owned slots of a miner this validator first hears
// from at at begin to count: the start of at's epoch, or one miner_ttl
// after this validator's own start if later. A miner is scored for its
// whole epoch, so one that stays unconnected until late in an epoch (where
// no announce of it reaches this validator) has the slots it skipped
// before counted too; a miner announces within miner_ttl, so one heard
// that soon after the validator started owes nothing for the wait.
func (v *Validator) slotsFrom(at time.Time) time.Time {
	if v.sched == nil {
		return time.Time{}
	}
	c := v.env.Config
	return later(epoch.StartOf(v.env.EpochAt(at), c.Network.EpochLength.Duration),
		time.Unix(0, v.started).Add(c.Validator.MinerTTL.Duration))
}

// slotPassed moves the miner's owned slot on once its opening window has
// passed, and records a no-show for each owned slot passed in which no
// round started and this validator's own round (one overrunning from an
// earlier slot, within its allowance) or host set (running in the window,
// or over since) did not hold the miner.
func (v *Validator) slotPassed(ctx context.Context, p peer.ID, e *minerEntry, now time.Time) {
	cfg := v.env.Config.Validator
	slot := v.sched.ForMiner(plan.RoundTarget(cfg, e.ann)).Slot
	if e.next.IsZero() {
		from := now
		if !e.counted.IsZero() && e.counted.Before(now) {
			from = e.counted
		}
		e.next, e.counted = v.sched.nextSlot(p, e.ann, cfg, from), time.Time{}
	}
	for now.After(e.next.Add(slot / 8)) {
		end := e.next.Add(slot / 8)
		free := !e.busy && !e.hostBusy && !e.hostEnded.After(e.next)
		if !e.served.Equal(e.next) && (free || heldByMiner(e, end) || hostSetHeld(e, end)) {
			epoch := v.epochs.Begin(v.env.EpochAt(e.next))
			v.wg.Add(1)
			v.reserveRounds(1)
			v.round++
			go v.noShow(ctx, epoch, v.round, p, e.ann, e.tflops[proof.FP16], e.floor[proof.FP16], e.next, noShowWhy(e, "owned slot", end))
		}
		e.next = v.sched.nextSlot(p, e.ann, cfg, e.next.Add(slot/8+1))
	}
}

// noShow stores the record of an owned slot the miner was absent for: the
// challenge the validator would have sent at the slot's start, signed, and
// the reason. Like a missed round it lowers availability (MissedRound).
func (v *Validator) noShow(ctx context.Context, ep, rnd uint64, p peer.ID, ann *pb.MinerAnnounce, tflops, floor float64, slot time.Time, why string) {
	defer v.wg.Done()
	rec := &store.RoundRecord{Epoch: ep, Round: rnd, Miner: []byte(p), Validator: []byte(v.id()), Verdict: store.VerdictFailed,
		SentUnixNano: slot.UnixNano(), Reason: epoch.NoShowPrefix + why}
	_, _, _, err := v.challenge(rec, ann, proof.FP16, tflops, floor, 0)
	stored := false
	switch {
	case err != nil:
		v.env.Log.Warn("no-show not recorded", "miner", p, "epoch", ep, "round", rnd, "err", err)
	case ctx.Err() != nil:
	default:
		v.env.Log.Info("no-show", "miner", p, "epoch", ep, "round", rnd)
		if err := v.store.PutRound(rec); err != nil {
			v.env.Log.Error("storing round evidence failed", "miner", p, "err", err)
		} else {
			stored = true
		}
	}
	v.mu.Lock()
	v.epochs.End(ep)
	v.closed.Broadcast()
	v.mu.Unlock()
	if stored && v.env.OnRecord != nil {
		v.env.OnRecord(rec)
	}
}

// roundMarkStep is how many round numbers one synced mark write reserves.
const roundMarkStep = 1024

// reserveRounds raises the store's round mark, when due, above the next n
// round numbers before they are handed out, so that a restart never reuses
// one: a round this node's shutdown interrupts stores no record.
func (v *Validator) reserveRounds(n int) {
	if v.round+uint64(n) <= v.marked {
		return
	}
	mark := v.round + uint64(n) + roundMarkStep
	if err := v.store.RaiseRoundMark(mark); err != nil {
		v.env.Log.Error("storing the round mark failed", "err", err)
		return
	}
	v.marked = mark
}

// errRoundCutoff ends a round still running at its epoch's epoch.RoundsCutoff.
var errRoundCutoff = errors.New("round abandoned unrecorded: its epoch's record is due")

// play runs one round and stores its record before the round's epoch can
// close.
func (v *Validator) play(ctx context.Context, ep, rnd uint64, p peer.ID, ann *pb.MinerAnnounce, prec proof.Precision, tflops, floor float64) {
	defer v.wg.Done()
	start := time.Now()
	net := v.env.Config.Network
	rctx, cancel := context.WithDeadlineCause(ctx, epoch.RoundsCutoff(ep, net.FinalityEpochs, net.EpochLength.Duration), errRoundCutoff)
	defer cancel()
	rec := v.runRound(rctx, ep, rnd, p, ann, prec, tflops, floor)
	stored := false
	switch {
	case rec == nil:
		// Skipped (intoOwnHostSlot): no challenge was sent.
	case ctx.Err() != nil:
		// Interrupted by this node's own shutdown, a round is no evidence
		// about the miner either way.
	case rctx.Err() != nil:
		// Nor is one cut off (errRoundCutoff) so that its epoch's record
		// is not late; runRound logged it.
	default:
		if err := v.store.PutRound(rec); err != nil {
			v.env.Log.Error("storing round evidence failed", "miner", p, "err", err)
		} else {
			stored = true
		}
	}
	v.mu.Lock()
	if e := v.miners[p]; e != nil && rec == nil {
		e.busy, e.held = false, hold{}
	} else if e != nil {
		e.busy, e.held = false, hold{}
		if stored && rec.Verdict == store.VerdictVerified {
			e.verified = max(e.verified, ep+1)
		}
		if stored && rec.Verdict == store.VerdictVerified && len(rec.StepArrivals) > 0 {
			// Sized by what the miner did, not the credit min_timed caps.
			measured := plan.TimedRate(rec)
			e.floor[prec] = measured
			e.tflops[prec] = plan.SizingTFLOPS(measured, time.Duration(rec.RTTNanos), rec.StepArrivals)
		} else {
			// Not measured (cut off, failed, missed): back off towards what
			// was last measured, so an overshoot cannot repeat.
			e.tflops[prec] = max(e.floor[prec], e.tflops[prec]/plan.MaxSpeedup)
		}
		v.pause(e, p, ann, start, time.Duration(rec.RTTNanos))
	}
	v.epochs.End(ep)
	v.closed.Broadcast()
	v.mu.Unlock()
	if stored && v.env.OnRecord != nil {
		v.env.OnRecord(rec)
	}
}

// pause sets when the miner's next round may start after one that started
// at start with round trip rtt. The pause follows the round's nominal
// length (plan.NominalRound), so a slow or stalled round does not also space
// the next ones out, while one lengthened by a long round trip keeps the
// duty cycle; rounds start no closer than the network's challenge rate
// (Env.ChallengeEvery), which peers would otherwise Ignore.
func (v *Validator) pause(e *minerEntry, p peer.ID, ann *pb.MinerAnnounce, start time.Time, rtt time.Duration) {
	after := later(time.Now(), start.Add(v.env.ChallengeEvery))
	cfg := v.env.Config.Validator
	if v.sched != nil {
		e.next = v.sched.nextSlot(p, ann, cfg, after)
	} else {
		gap := plan.NextGap(v.minerRand(e, p), min(time.Since(start), plan.NominalRound(cfg, ann, rtt)), cfg.DutyCycle)
		e.next = later(time.Now().Add(gap), start.Add(v.env.ChallengeEvery))
	}
}

// minerRand is the random stream of the validator's draws for miner p:
// each miner's own, keyed by the validator's seed, so that the draws for
// one miner do not depend on how rounds with others interleave.
func (v *Validator) minerRand(e *minerEntry, p peer.ID) *mrand.Rand {
	if e.rnd == nil {
		var seed [32]byte
		blake3.DeriveKey(seed[:], "pog 2026-12-02 validator miner draws v1", append(v.seed[:], p...))
		e.rnd = mrand.New(mrand.NewChaCha8(seed))
	}
	return e.rnd
}

// draws is the validator's random stream for one round with miner: its
// nonces and sampling secret, derived from its secret seed as RFC 6979
// derives a signature's nonce from the key. A round's draws depend on no
// other round, so they do not change with how rounds interleave, and no
// one without the key can predict them.
func (v *Validator) draws(kind string, miner peer.ID, epoch, rnd uint64) io.Reader {
	h := blake3.New(32, v.seed[:])
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00", kind, v.started, epoch, rnd)
	h.Write([]byte(miner))
	return h.XOF()
}

// runRound plays one round against one miner and returns its evidence;
// nil if it skipped the round, sending nothing.
func (v *Validator) runRound(ctx context.Context, epoch, rnd uint64, miner peer.ID, ann *pb.MinerAnnounce, prec proof.Precision, tflops, floor float64) *store.RoundRecord {
	rec := &store.RoundRecord{Epoch: epoch, Round: rnd, Miner: []byte(miner), Validator: []byte(v.id()), Verdict: store.VerdictFailed}
	failed := func(format string, args ...any) *store.RoundRecord {
		rec.Reason = fmt.Sprintf(format, args...)
		v.env.Log.Warn("round failed", "miner", miner, "epoch", epoch, "round", rnd, "reason", rec.Reason)
		return rec // without a challenge sent it fails validation: not stored
	}
	due := v.pingsDue(miner)
	rtt := v.sizingRTT(miner, measureRTT(ctx, v.env.Host, v.env.Log, miner))
	late := overrun(due)
	rec.RTTNanos = rtt.Nanoseconds()
	pl, msg, chain, err := v.challenge(rec, ann, prec, tflops, floor, rtt)
	if err != nil {
		return failed("%v", err)
	}
	at := time.Now().Add(-late)
	if v.intoOwnHostSlot(at, at.Add(rtt+expectedSteps(v.env.Config.Validator, ann, pl, rtt))) {
		v.env.Log.Debug("round skipped: it could run into this validator's host slot", "miner", miner, "epoch", epoch, "round", rnd)
		return nil
	}
	raw, id := rec.Challenge, chain.ID
	m, err := round.NewValidator(round.Plan{Chain: chain, Secret: pl.Secret, Commitment: [32]byte(msg.SecretCommitment),
		Samples: pl.Samples, FirstRootBy: time.Duration(msg.FirstRootMs) * time.Millisecond,
		Deadline: time.Duration(msg.DeadlineMs) * time.Millisecond, Window: round.PeakWindow,
		MinTimed:  time.Duration(msg.MinTimedMs) * time.Millisecond,
		OtherRoot: func(r commit.CV) bool { return v.env.OtherRoot(miner, r) }})
	if err != nil {
		return failed("round: %v", err)
	}
	s, err := stream.Open(ctx, v.env.Host, miner, protocol.RoundProtocol)
	if err != nil {
		return failed("open round stream: %v", err)
	}
	end := stream.End{S: s}
	defer end.Reset()
	rs := stream.NewRound(s)
	if err := rs.Send(&pb.RoundFrame{Msg: &pb.RoundFrame_Challenge{Challenge: raw}}); err != nil {
		return failed("sending challenge: %v", err)
	}
	origin := time.Now()
	rec.SentUnixNano = origin.UnixNano()
	phase := roundSteps
	if pl.Probe {
		phase = roundProbe
	}
	v.setPhase(miner, phase, origin.Add(rtt+stepsAllowance(pl)-late))
	if err := v.env.PublishRaw(ctx, protocol.TopicChallenge, raw); err != nil {
		return failed("publishing challenge: %v", err)
	}
	d := &vdriver{v: v, ctx: ctx, rec: rec, rs: rs, m: m, miner: miner, id: id, chain: chain, origin: origin}
	out := d.run(round.Start{At: 0})
	v.fill(rec, out, d)
	if !out.Verified && !plan.Supports(ann, prec) {
		// The validator chose the class; a miner that cannot compute it
		// fails the round (the prefix keeps it from counting as missed).
		rec.Reason = truncate(fmt.Sprintf("precision %v not announced: %s", prec, rec.Reason), store.MaxReasonLen)
	}
	if out.Verified {
		v.env.Log.Info("round verified", "miner", miner, "epoch", epoch, "round", rnd, "steps", pl.Steps,
			"tflops", fmt.Sprintf("%.4f", rec.TFLOPS), "peak_tflops", fmt.Sprintf("%.4f", rec.PeakTFLOPS),
			"rtt_ms", rtt.Milliseconds(), "verify_ms", rec.VerifyNanos/1e6)
	} else {
		v.env.Log.Warn("round failed", "miner", miner, "epoch", epoch, "round", rnd, "reason", rec.Reason)
	}
	rs.Send(&pb.RoundFrame{Msg: &pb.RoundFrame_Result{Result: &pb.RoundResult{Verified: out.Verified,
		Reason: truncate(rec.Reason, protocol.MaxErrorString), Tflops: rec.TFLOPS, PeakTflops: rec.PeakTFLOPS}}})
	end.Close()
	return rec
}

// epochAnnounce is the announce of miner that scoring reads for epoch
// (scoringInput): the first stored for it, and if none is, raw, its
// latest (ann decoded), stored now as the epoch's. So a round is planned
// from the GPUs it is scored against, even one planned before the epoch's
// first announce arrives (the late GPUs of memory-inflate's last announce
// of the epoch before were planned from, then not scored).
func (v *Validator) epochAnnounce(epoch uint64, miner peer.ID, ann *pb.MinerAnnounce, raw []byte) *pb.MinerAnnounce {
	if len(raw) > 0 {
		if _, err := v.store.PutAnnounce(epoch, []byte(miner), raw); err != nil {
			v.env.Log.Error("storing announce failed", "miner", miner, "err", err)
		}
	}
	raw, err := v.store.Announce(epoch, []byte(miner))
	if err != nil {
		return ann
	}
	o, err := protocol.Decode(raw, pb.MessageType_MINER_ANNOUNCE)
	if err != nil || o.Author != miner {
		return ann
	}
	return o.Msg.(*pb.MinerAnnounce)
}

// challenge plans and seals the challenge of rec's round, and puts it,
// its secret and its work in rec.
func (v *Validator) challenge(rec *store.RoundRecord, ann *pb.MinerAnnounce, prec proof.Precision, tflops, floor float64, rtt time.Duration) (plan.ChallengePlan, *pb.Challenge, proof.Chain, error) {
	miner := peer.ID(rec.Miner)
	pl, err := plan.Challenge(v.env.Config.Validator, miner, ann, v.env.Scoring.LeastMemory(plan.GPUNames(ann)), prec, tflops, floor, rtt, v.draws("round", miner, rec.Epoch, rec.Round))
	if err != nil {
		return pl, nil, proof.Chain{}, fmt.Errorf("cannot size a round: %w", err)
	}
	msg := &pb.Challenge{Version: protocol.Version, Epoch: rec.Epoch, Round: rec.Round, Miner: rec.Miner,
		SecretCommitment: commitSecret(pl.Secret), Samples: uint32(pl.Samples), Steps: uint32(pl.Steps),
		DeadlineMs: uint32(pl.Deadline.Milliseconds()), FirstRootMs: uint32(max(1, pl.FirstRootBy.Milliseconds())),
		MinTimedMs: uint32(pl.MinTimed.Milliseconds()), Probe: pl.Probe}
	for _, p := range pl.Params {
		b, _ := p.MarshalBinary()
		msg.Params = append(msg.Params, b)
	}
	raw, err := protocol.Seal(v.env.Key, msg)
	if err != nil {
		return pl, nil, proof.Chain{}, fmt.Errorf("sealing challenge: %w", err)
	}
	o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
	if err != nil {
		return pl, nil, proof.Chain{}, fmt.Errorf("own challenge invalid: %w", err)
	}
	chain := proof.Chain{ID: protocol.ID(o.Body), Template: pl.Params, Steps: pl.Steps}
	rec.Secret, rec.Challenge = pl.Secret, raw
	rec.FLOPs = float64(pl.Steps) * round.StepFLOPs(chain)
	return pl, msg, chain, nil
}

// fill copies a finished round's outcome into its record.
func (v *Validator) fill(rec *store.RoundRecord, out round.Outcome, d *vdriver) {
	rec.Commitment, rec.CommitNanos = d.commitment, d.commitNanos
	if len(rec.Commitment) == 0 {
		rec.CommitNanos = 0
	}
	rec.VerifyNanos = d.verify.Nanoseconds()
	rec.Indices = out.Indices
	for _, a := range out.Arrivals {
		rec.StepArrivals = append(rec.StepArrivals, a.Nanoseconds())
	}
	for _, t := range out.Tiles {
		rec.Tiles = append(rec.Tiles, store.TileVerdict{Index: t.Index, OK: t.OK, Reason: truncate(t.Reason, store.MaxTileReasonLen)})
	}
	if len(out.Leaves) == len(out.Indices) {
		for _, p := range out.Proofs {
			if b, err := p.MarshalBinary(); err == nil {
				rec.Proofs = append(rec.Proofs, b)
			}
		}
		for _, l := range out.Leaves {
			rec.Leaves = append(rec.Leaves, l)
		}
	}
	if out.Verified {
		rec.Verdict, rec.Reason = store.VerdictVerified, ""
		rec.TFLOPS, rec.PeakTFLOPS = out.TFLOPS, out.PeakTFLOPS
	} else {
		rec.Reason = truncate(out.Reason, store.MaxReasonLen)
		if rec.Reason == "" {
			rec.Reason = "failed"
		}
		if b := out.BadTile; b != nil && len(rec.Leaves) > 0 {
			rec.BadTile = &store.TileData{Index: b.Index, Data: b.Data}
		}
	}
}

// rttPings is how many pings measureRTT takes the least of: one ping
// waits for the scheduler of two loaded hosts as well as for the network,
// and the least of a few is the path's round trip. A miner delaying its
// pongs delays every one, so the least is no help to it.
const rttPings = 3

// rttWindow is how many rounds' round trips sizingRTT takes the least of.
const rttWindow = 8

// sizingRTT records rtt, measured before a round or host set with miner,
// and returns the least of the last rttWindow (0s, failed pings,
// excepted): a miner that slows its pongs now and then does not lengthen
// its steps, and a lasting change of path counts after rttWindow rounds.
func (v *Validator) sizingRTT(miner peer.ID, rtt time.Duration) time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.miners[miner]
	if e == nil || rtt <= 0 {
		return rtt
	}
	e.rtts = append(e.rtts, rtt)
	e.rtts = e.rtts[max(0, len(e.rtts)-rttWindow):]
	return slices.Min(e.rtts)
}

// measureRTT is the least round trip of rttPings pings of miner on the
// existing connection (libp2p ping); 0 if none succeeds.
func measureRTT(ctx context.Context, h host.Host, log *slog.Logger, miner peer.ID) time.Duration {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var least time.Duration
	results := ping.Ping(pctx, h, miner)
	for range rttPings {
		select {
		case r, ok := <-results:
			if !ok {
				return least
			}
			if r.Error != nil {
				log.Debug("ping failed", "peer", miner, "err", r.Error)
				return least
			}
			if least == 0 || r.RTT < least {
				least = r.RTT
			}
		case <-pctx.Done():
			return least
		}
	}
	return least
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func commitSecret(s [32]byte) []byte {
	c := sample.Commit(s)
	return c[:]
}

// epochLoop closes each epoch once its rounds are stored: it scores the
// validator's evidence, stores the signed record and gossips it. Epochs are
// closed in turn, so a validator slower than its epochs still signs a
// record for each and waits for each one's rounds; one that fell behind by
// more than the finality depth (a suspended process) resumes at the current
// epoch, since records for final epochs no longer count.
func (v *Validator) epochLoop(ctx context.Context) {
	defer v.env.WG.Done()
	length := v.env.Config.Network.EpochLength.Duration
	e := v.env.EpochAt(time.Now())
	for ; ; e++ {
		if now := v.env.EpochAt(time.Now()); now > e+v.env.Config.Network.FinalityEpochs {
			// Skipped epochs sign nothing, but their rounds end first.
			v.mu.Lock()
			for v.epochs.Close(now - 1); v.epochs.Pending(now) > 0; {
				v.closed.Wait()
			}
			v.mu.Unlock()
			e = now
		}
		end := time.Unix(0, int64(e+1)*int64(length))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(end)):
		}
		// From here on new rounds are tagged into e+1; those of e finish
		// (or are abandoned at shutdown) and are stored first.
		v.mu.Lock()
		for v.epochs.Close(e) > 0 {
			v.closed.Wait()
		}
		v.mu.Unlock()
		if err := v.closeEpoch(ctx, e); err != nil && ctx.Err() == nil {
			v.env.Log.Error("closing epoch failed", "epoch", e, "err", err)
		}
	}
}

func (v *Validator) closeEpoch(ctx context.Context, e uint64) error {
	defer v.env.EpochClosed(time.Now())
	rec, scores, err := v.scorer.Close(e)
	if err != nil {
		return err
	}
	if v.env.AlterRecord != nil {
		v.env.AlterRecord(rec)
	}
	raw, err := protocol.Seal(v.env.Key, rec)
	if err != nil {
		return err
	}
	if err := v.store.PutEpochRecord(e, []byte(v.id()), raw); err != nil {
		return err
	}
	v.setLatestRecord(raw)
	if err := v.env.PublishRaw(ctx, protocol.TopicEpoch, raw); err != nil {
		return err
	}
	v.env.Log.Info("epoch closed", "epoch", e, "miners", len(scores), "weights", len(rec.Weights))
	return nil
}
