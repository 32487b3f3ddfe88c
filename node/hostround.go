package node

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Host rounds (SPEC §23.8): once per epoch a validator spends one of its
// slots with a miner, the one after the first GPU round, on a CPU host
// round. The
// validator sizes the challenge from the miner's announced cores and times
// the checkpoint root less the round trip; protocol/hostround decides.

// Host round sizes.
const (
	// hostCheckpoints is the number of segments per chain.
	hostCheckpoints = 16
	// hostSamples is the number of segments the validator recomputes.
	hostSamples = 16
	// maxHostChains bounds validator.host_cpu_max_chains.
	maxHostChains = 256
	// maxHostWork bounds the chain steps a miner runs for one host round
	// (about a minute of one core at cpuwork's 29 ns per step).
	maxHostWork = 1 << 31
)

// hostPlan is a validator's CPU host round before it is sent.
type hostPlan struct {
	ch     hostChallenge
	secret [32]byte
	rtt    time.Duration
	rootBy time.Duration
}

// planHost sizes a CPU host round for miner: one chain per announced core
// (1 if none is announced, at most maxChains) of steps steps. The root
// is due after the round trip, a second of slack and twice the work at the
// step bound on one chain per core.
func planHost(steps uint64, maxChains int, miner peer.ID, ann *pb.MinerAnnounce, rtt time.Duration) (*hostPlan, error) {
	chains := uint64(1)
	if h := ann.GetHardware(); h != nil && h.CpuCores > 0 {
		chains = min(uint64(h.CpuCores), uint64(max(1, maxChains)))
	}
	p := &hostPlan{rtt: rtt}
	if _, err := rand.Read(p.secret[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(p.ch.CPU.Seed[:]); err != nil {
		return nil, err
	}
	p.ch.Commitment = sample.Commit(p.secret)
	p.ch.Samples = hostSamples
	p.ch.CPU.Miner, p.ch.CPU.TableLog = []byte(miner), cpuwork.DefaultTableLog
	p.ch.CPU.Shape = host.Shape{Chains: chains, Steps: steps, Segment: max(1, steps/hostCheckpoints)}
	if err := p.ch.CPU.Validate(); err != nil {
		return nil, err
	}
	work := time.Duration(2 * float64(steps) * cpuwork.StepBoundNs)
	p.rootBy = rtt + time.Second + work
	p.ch.RootByMs = uint32(min(p.rootBy.Milliseconds()+1, 1<<31))
	return p, nil
}

// hostResult is a played host round: the plan and the machine's outcome.
type hostResult struct {
	plan        *hostPlan
	out         hostround.Outcome
	rootNanos   int64  // the root's arrival after the challenge; 0 if none
	opening     []byte // as received
	verifyNanos int64
}

// runHost plays one CPU host round of steps per chain with miner over a
// direct stream.
func (v *validator) runHost(ctx context.Context, miner peer.ID, ann *pb.MinerAnnounce, steps uint64) (*hostResult, error) {
	rtt := measureRTT(ctx, v.n, miner)
	plan, err := planHost(steps, v.n.cfg.Validator.HostCPUMaxChains, miner, ann, rtt)
	if err != nil {
		return nil, fmt.Errorf("cannot size a host round: %w", err)
	}
	res := &hostResult{plan: plan}
	p := &plan.ch.CPU
	m, err := hostround.NewValidator(hostround.Plan{Shape: p.Shape, BoundNs: cpuwork.StepBoundNs, Secret: plan.secret,
		Params: p.Encode(), Samples: hostSamples, RTT: rtt, RootBy: plan.rootBy,
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			t0 := time.Now()
			defer func() { res.verifyNanos = time.Since(t0).Nanoseconds() }()
			op, err := host.DecodeOpening(b, cpuwork.StateBytes)
			if err != nil {
				return err
			}
			return cpuwork.Verify(p, root, segs, op)
		}})
	if err != nil {
		return nil, err
	}
	s, err := v.n.host.NewStream(ctx, miner, HostProtocol)
	if err != nil {
		return nil, fmt.Errorf("open host stream: %w", err)
	}
	defer s.Reset() // after the Close below, a no-op
	d := &hdriver{s: s, r: bufio.NewReader(s), w: bufio.NewWriter(s), m: m, plan: plan,
		proofTimeout: v.n.cfg.Validator.ProofTimeout.Duration, res: res}
	if err := d.send(plan.ch.encode()); err != nil {
		return nil, fmt.Errorf("sending host challenge: %w", err)
	}
	d.origin = time.Now()
	d.play()
	s.CloseWrite()
	s.Close()
	return res, nil
}

// hdriver feeds one host round's stream to its machine. The machine's one
// timer (the root deadline) is the stream's read deadline.
type hdriver struct {
	s            network.Stream
	r            *bufio.Reader
	w            *bufio.Writer
	m            *hostround.Validator
	plan         *hostPlan
	origin       time.Time
	proofTimeout time.Duration
	res          *hostResult
}

func (d *hdriver) send(b []byte) error { return writeFlush(d.w, b) }

func (d *hdriver) play() {
	pending := d.m.Step(hostround.Start{At: 0})
	for len(pending) > 0 {
		a := pending[0]
		pending = pending[1:]
		switch a := a.(type) {
		case hostround.SetTimer:
			pending = append(pending, d.m.Step(d.readRoot(a.At))...)
		case hostround.Reveal:
			if err := d.send(d.plan.secret[:]); err != nil {
				pending = append(pending, d.m.Step(hostround.Closed{Err: err})...)
			}
		case hostround.Fetch:
			if d.m.Done() { // the reveal could not be sent
				continue
			}
			pending = append(pending, d.m.Step(d.readOpening(len(a.Segments)))...)
		case hostround.Finish:
			d.res.out = a.Outcome
			return
		}
	}
}

// readRoot waits for the root until the deadline at (after origin).
func (d *hdriver) readRoot(at time.Duration) any {
	d.s.SetReadDeadline(d.origin.Add(at))
	b, err := protocol.ReadFrame(d.r, len(commit.CV{}))
	now := time.Since(d.origin)
	if err == nil {
		d.res.rootNanos = max(now.Nanoseconds(), 1)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return hostround.Timer{At: max(now, at)}
	case err != nil:
		return hostround.Closed{Err: err}
	case len(b) != len(commit.CV{}):
		return hostround.Closed{Err: fmt.Errorf("root of %d bytes", len(b))}
	}
	return hostround.Root{At: now, Root: commit.CV(b)}
}

// readOpening reads the opening of segs segments, its memory reserved in
// the stream's scope.
func (d *hdriver) readOpening(segs int) any {
	need := maxHostOpening(segs, d.plan.ch.CPU.Leaves())
	if err := d.s.Scope().ReserveMemory(need, network.ReservationPriorityHigh); err != nil {
		return hostround.Opening{Err: fmt.Errorf("host stream memory budget: %w", err)}
	}
	defer d.s.Scope().ReleaseMemory(need)
	d.s.SetReadDeadline(time.Now().Add(d.proofTimeout))
	b, err := protocol.ReadFrame(d.r, min(need, store.MaxHostOpeningLen))
	d.res.opening = b
	return hostround.Opening{Bytes: b, Err: err}
}

// handleHost answers a host round a validator opened: one at a time, from
// validators this node accepts challenges from, for this miner's ID, at
// most maxHostWork steps.
func (m *miner) handleHost(st network.Stream) {
	from := st.Conn().RemotePeer()
	defer st.Reset() // after the Close below, a no-op
	if !m.n.view.acceptsChallenges(from) {
		m.n.log.Warn("refusing a host round from a peer that is not a validator", "peer", from)
		return
	}
	if !m.hostBusy.TryLock() {
		m.n.log.Warn("refusing a host round: one is in play", "validator", from)
		return
	}
	defer m.hostBusy.Unlock()
	if err := m.serveHost(st); err != nil {
		m.n.log.Warn("host round not served", "validator", from, "err", err)
		return
	}
	st.CloseWrite()
	st.Close()
}

func (m *miner) serveHost(st network.Stream) error {
	st.SetDeadline(time.Now().Add(streamDeadline))
	r, w := bufio.NewReader(st), bufio.NewWriter(st)
	raw, err := protocol.ReadFrame(r, maxHostChallenge)
	if err != nil {
		return err
	}
	ch, err := decodeHostChallenge(raw)
	switch {
	case err != nil:
		return err
	case peer.ID(ch.CPU.Miner) != m.n.ID():
		return errors.New("host challenge for another miner")
	case ch.CPU.Chains*ch.CPU.Steps > maxHostWork || ch.CPU.Steps > maxHostWork:
		return fmt.Errorf("host challenge of %d×%d steps: at most %d", ch.CPU.Chains, ch.CPU.Steps, maxHostWork)
	}
	st.SetDeadline(time.Now().Add(time.Duration(ch.RootByMs)*time.Millisecond + streamDeadline))
	prove := func(p *cpuwork.Params) ([][]byte, error) { return cpuwork.Prove(p, m.n.cfg.Miner.Workers) }
	if m.hooks.HostProve != nil {
		prove = m.hooks.HostProve
	}
	states, err := prove(&ch.CPU)
	if err != nil {
		return err
	}
	root, leaves, err := host.Commit(cpuwork.Tag, states)
	if err != nil {
		return err
	}
	if err := writeFlush(w, root[:]); err != nil {
		return err
	}
	secret, err := protocol.ReadFrame(r, 32)
	if err != nil {
		return fmt.Errorf("sampling secret: %w", err)
	}
	if len(secret) != 32 || sample.Commit([32]byte(secret)) != ch.Commitment {
		return errors.New("the revealed secret does not match its commitment")
	}
	segs := host.Sample([32]byte(secret), root, ch.CPU.Encode(), ch.CPU.Shape, int(ch.Samples))
	op, err := host.Open(ch.CPU.Shape, states, leaves, segs)
	if err != nil {
		return err
	}
	b, err := op.MarshalBinary()
	if err != nil {
		return err
	}
	return writeFlush(w, b)
}

func writeFlush(w *bufio.Writer, b []byte) error {
	if err := protocol.WriteFrame(w, b); err != nil {
		return err
	}
	return w.Flush()
}

// acceptsChallenges reports whether p may challenge this node.
func (v *view) acceptsChallenges(p peer.ID) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.trustAny || v.validators[p]
}

// hostDue says whether the miner's next slot in epoch goes to a host round
// (one per epoch, when host rounds are on), and claims it: a slot after
// the miner's first GPU round of the epoch, so that a short epoch still
// measures the GPU, and after a random point of the epoch's first half
// (hostAt), so that a validator's host rounds, a core-bound chain for
// every miner, do not all land together at the epoch's start.
func (v *validator) hostDue(e *minerEntry, epoch uint64, now time.Time) bool {
	if v.n.cfg.Validator.HostCPUSteps == 0 || e.hostEpoch == epoch+1 || e.epoch != epoch || len(e.classes) == 0 {
		return false
	}
	if e.hostAtEpoch != epoch+1 {
		l := v.n.cfg.Network.EpochLength.Duration
		e.hostAt = time.Unix(0, int64(epoch)*int64(l)).Add(time.Duration(v.rnd.Float64() * float64(l/2)))
		e.hostAtEpoch = epoch + 1
	}
	if now.Before(e.hostAt) {
		return false
	}
	e.hostEpoch = epoch + 1
	return true
}

// playHost runs one host round in a miner's slot and reports it before the
// round's epoch can close.
func (v *validator) playHost(ctx context.Context, epoch, rnd uint64, p peer.ID, ann *pb.MinerAnnounce) {
	defer v.wg.Done()
	start := time.Now()
	net := v.n.cfg.Network
	rctx, cancel := context.WithDeadlineCause(ctx, roundsCutoff(epoch, net.FinalityEpochs, net.EpochLength.Duration), errRoundCutoff)
	defer cancel()
	res, err := v.runHost(rctx, p, ann, v.n.cfg.Validator.HostCPUSteps)
	var rec *store.HostRecord
	switch {
	case ctx.Err() != nil || rctx.Err() != nil:
		// Shutdown or the epoch's cutoff: no evidence either way.
	case err != nil:
		v.n.log.Warn("host round not played", "miner", p, "epoch", epoch, "err", err)
	default:
		rec = v.reportHost(epoch, rnd, p, res)
	}
	v.mu.Lock()
	if e := v.miners[p]; e != nil {
		e.busy = false
		if v.sched != nil {
			v.pause(e, p, ann, start)
		} else {
			// No random pause: the duty cycle paces GPU rounds, and a
			// host round is a short measurement between two of them.
			e.next = later(time.Now(), start.Add(challengeEvery))
		}
	}
	v.epochs.End(epoch)
	v.closed.Broadcast()
	v.mu.Unlock()
	if rec != nil && v.onHost != nil {
		v.onHost(rec)
	}
}

// reportHost logs and stores a played host round; it returns the stored
// record, nil if storing failed.
func (v *validator) reportHost(epoch, rnd uint64, p peer.ID, res *hostResult) *store.HostRecord {
	rec := res.record(epoch, rnd, p, v.n.ID())
	stored := rec
	if err := v.store.PutHost(rec); err != nil {
		v.n.log.Error("storing host evidence failed", "miner", p, "err", err)
		stored = nil
	}
	o := res.out
	if m, ok := hostMeasurement(rec); ok {
		v.n.log.Info("host round verified", "miner", p, "epoch", epoch, "kind", "cpu", "chains", m.CPUChains,
			"step_ns", fmt.Sprintf("%.1f", float64(hostElapsed(rec).Nanoseconds())/float64(res.plan.ch.CPU.Steps)),
			"credited_steps_per_s", fmt.Sprintf("%.4g", m.CPUStepsPerSecond), "verify_ms", res.verifyNanos/1e6)
	} else {
		v.n.log.Warn("host round failed", "miner", p, "epoch", epoch, "kind", "cpu", "missed", o.Missed, "reason", o.Reason)
	}
	return stored
}

// record is the round's evidence.
func (res *hostResult) record(epoch, rnd uint64, miner, validator peer.ID) *store.HostRecord {
	o := res.out
	rec := &store.HostRecord{Epoch: epoch, Round: rnd, Miner: []byte(miner), Validator: []byte(validator),
		Challenge: res.plan.ch.encode(), Secret: res.plan.secret, RTTNanos: res.plan.rtt.Nanoseconds(),
		RootNanos: res.rootNanos, Root: o.Root, Opening: res.opening, VerifyNanos: res.verifyNanos,
		Verdict: store.VerdictFailed, Missed: o.Missed, Reason: truncate(o.Reason, store.MaxReasonLen)}
	if o.Verified {
		rec.Verdict, rec.Reason = store.VerdictVerified, ""
	} else if rec.Reason == "" {
		rec.Reason = "failed"
	}
	return rec
}

// lastHostRound is the highest round number among self's host records of
// epochs e−1 to e+1, or last if higher.
func lastHostRound(st *store.Store, self peer.ID, e, last uint64) (uint64, error) {
	for r, err := range st.HostRounds(max(e, 1)-1, e+1) {
		if err != nil {
			return 0, err
		}
		if peer.ID(r.Validator) == self {
			last = max(last, r.Round)
		}
	}
	return last, nil
}
