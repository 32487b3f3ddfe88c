package validator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Host rounds (SPEC §23.8, §23.9): once per epoch a validator spends
// slots with a miner, from the one after the first GPU round on, on a CPU
// host round, a RAM host round if the miner announces a dataset and a
// storage host round if it announces a plot. The validator sizes each
// challenge from the miner's announce and times the checkpoint root less
// the round trip; protocol/hostround decides.

// hostKinds are the host rounds a validator plays with a miner each epoch,
// in order: CPU, then RAM if it announces a dataset, then storage if it
// announces a plot of the network's block size and rounds.
func (v *Validator) hostKinds(p peer.ID, ann *pb.MinerAnnounce) []byte {
	cfg := v.env.Config.Validator
	var kinds []byte
	if cfg.HostCPUWindow.Duration > 0 {
		kinds = append(kinds, hostround.KindCPU)
	}
	if cfg.HostRAMSteps > 0 && ann.GetRamItems() >= 2 {
		kinds = append(kinds, hostround.KindRAM)
	}
	if _, _, ok := plan.AnnouncedPlot(p, ann, v.env.Config.Network); ok && cfg.HostPlotSteps > 0 {
		kinds = append(kinds, hostround.KindPlot)
	}
	return kinds
}

// HostResult is a played host round: the plan and the machine's outcome.
type HostResult struct {
	Plan        *plan.HostPlan
	Out         hostround.Outcome
	rootNanos   int64  // the root's arrival after the challenge; 0 if none
	opening     []byte // as received
	verifyNanos int64
}

// RunHost plays one host round of kind with miner over a direct stream,
// sized for stepNs (plan.Host), and stores nothing. An error after the
// round was sized comes with the result holding its plan: the round was
// not served, and is recorded as missed (playHost).
func (v *Validator) RunHost(ctx context.Context, kind byte, miner peer.ID, ann *pb.MinerAnnounce, epoch, rnd uint64, stepNs float64) (*HostResult, error) {
	return v.runHost(ctx, kind, miner, ann, epoch, rnd, stepNs, measureRTT(ctx, v.env.Host, v.env.Log, miner))
}

// runHost is RunHost with the round trip measured before.
func (v *Validator) runHost(ctx context.Context, kind byte, miner peer.ID, ann *pb.MinerAnnounce, epoch, rnd uint64, stepNs float64, rtt time.Duration) (*HostResult, error) {
	pl, err := v.hostPlan(kind, miner, ann, epoch, rnd, rtt, stepNs)
	if err != nil {
		return nil, fmt.Errorf("cannot size a host round: %w", err)
	}
	res := &HostResult{Plan: pl}
	pr := pl.Challenge.Proof
	hp := hostround.Plan{Shape: pr.Dims(), BoundNs: pr.BoundNs(), Secret: pl.Secret,
		Params: pr.Encode(), Samples: int(pl.Challenge.Samples), MaxSample: pr.MaxSample(), RTT: rtt, RootBy: pl.RootBy,
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			t0 := time.Now()
			defer func() { res.verifyNanos = time.Since(t0).Nanoseconds() }()
			if v.env.CheckCPU != nil {
				v.env.CheckCPU(ctx, miner, pr.Kind(), len(segs))
			}
			return res.Plan.Challenge.Proof.Verify(root, segs, b)
		}}
	if c, ok := hostround.Windowed(pr); ok {
		// Checked, recorded and credited as proven (SPEC §23.2).
		hp.Window = c.Window()
		hp.Proven = func(n uint64) (hostround.Proof, error) {
			q, err := c.Proven(n)
			if err == nil {
				res.Plan.Challenge.Proof = q
			}
			return q, err
		}
	}
	m, err := hostround.NewValidator(hp)
	if err != nil {
		return nil, err
	}
	held := func(until time.Time) { v.setHostHeld(miner, until) }
	held(time.Now().Add(2*rtt + pingJitter)) // the stream's negotiation
	s, err := stream.Open(ctx, v.env.Host, miner, hostround.Protocol)
	if err != nil {
		return res, fmt.Errorf("open host stream: %w", err)
	}
	end := stream.End{S: s}
	defer end.Reset()
	d := &hdriver{s: s, r: bufio.NewReader(s), w: bufio.NewWriter(s), m: m, plan: pl,
		proofTimeout: v.env.Config.Validator.ProofTimeout.Duration, res: res, held: held, rtt: rtt}
	if err := d.send(pl.Challenge.Encode()); err != nil {
		return res, fmt.Errorf("sending host challenge: %w", err)
	}
	d.origin = time.Now()
	held(d.origin.Add(pl.RootBy))
	d.play()
	end.Close()
	return res, nil
}

// hdriver feeds one host round's stream to its machine. The machine's one
// timer (the root deadline) is the stream's read deadline. held excuses
// the miner's waits (setHostHeld): its root until root_by, its opening
// for its transfer.
type hdriver struct {
	s            network.Stream
	r            *bufio.Reader
	w            *bufio.Writer
	m            *hostround.Validator
	plan         *plan.HostPlan
	origin       time.Time
	proofTimeout time.Duration
	res          *HostResult
	held         func(until time.Time)
	rtt          time.Duration
}

func (d *hdriver) send(b []byte) error { return stream.WriteFlush(d.w, b) }

func (d *hdriver) play() {
	pending := d.m.Step(hostround.Start{At: 0})
	for len(pending) > 0 {
		a := pending[0]
		pending = pending[1:]
		switch a := a.(type) {
		case hostround.SetTimer:
			pending = append(pending, d.m.Step(d.readRoot(a.At))...)
		case hostround.Reveal:
			if err := d.send(d.plan.Secret[:]); err != nil {
				pending = append(pending, d.m.Step(hostround.Closed{Err: err})...)
			}
		case hostround.Fetch:
			if d.m.Done() { // the reveal could not be sent
				continue
			}
			pending = append(pending, d.m.Step(d.readOpening(len(a.Segments)))...)
		case hostround.Finish:
			d.res.Out = a.Outcome
			return
		}
	}
}

// readRoot waits for the root until the deadline at (after origin).
func (d *hdriver) readRoot(at time.Duration) any {
	d.s.SetReadDeadline(d.origin.Add(at))
	_, windowed := hostround.Windowed(d.plan.Challenge.Proof)
	b, err := protocol.ReadFrame(d.r, hostround.RootFrameLen(windowed))
	now := time.Since(d.origin)
	if err == nil {
		d.res.rootNanos = max(now.Nanoseconds(), 1)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return hostround.Timer{At: max(now, at)}
	}
	var root commit.CV
	var steps uint64
	if err == nil {
		root, steps, err = hostround.DecodeRootFrame(b, windowed)
	}
	if err != nil {
		return hostround.Closed{Err: err}
	}
	return hostround.Root{At: now, Root: root, Steps: steps}
}

// fetchFloor is the transfer rate a wait on a miner's opening allows for:
// heldFetch's second for the 4 MiB of a production round's tiles.
const fetchFloor = 4 << 20 // bytes per second

// openingAllowance is how long a host round's opening of at most need
// bytes may take after the reveal: a round trip for each flight of its
// slow start, a pingJitter and its transfer at fetchFloor. An opening is
// sent from what the miner kept, so a few KiB for CPU and RAM rounds; a
// plot's blocks take longer, and from a distant miner several round trips
// (145 KB from 400 ms away took 1.2 s).
func openingAllowance(rtt time.Duration, need int) time.Duration {
	return time.Duration(flights(need))*rtt + pingJitter + time.Duration(float64(need)/fetchFloor*float64(time.Second))
}

// initialWindow is the least initial congestion window a QUIC sender may
// use (RFC 9002 §7.2: ten datagrams of the least size, 1,200 bytes).
const initialWindow = 12000

// flights is how many round trips a sender in slow start, its window
// doubling each round trip from initialWindow, takes to send n bytes.
func flights(n int) int {
	k := 1
	for sent := initialWindow; sent < n; k++ {
		sent += initialWindow << k
	}
	return k
}

// readOpening reads the opening of segs segments, its memory reserved in
// the stream's scope.
func (d *hdriver) readOpening(segs int) any {
	need := min(d.plan.Challenge.Proof.MaxOpening(segs), store.MaxHostOpeningLen)
	if err := d.s.Scope().ReserveMemory(need, network.ReservationPriorityHigh); err != nil {
		return hostround.Opening{Err: fmt.Errorf("host stream memory budget: %w", err)}
	}
	defer d.s.Scope().ReleaseMemory(need)
	d.s.SetReadDeadline(time.Now().Add(d.proofTimeout))
	d.held(time.Now().Add(openingAllowance(d.rtt, need)))
	b, err := protocol.ReadFrame(d.r, need)
	d.held(time.Time{}) // the check is this validator's
	d.res.opening = b
	return hostround.Opening{Bytes: b, Err: err}
}

// hostDue returns the host rounds due with the miner in epoch without a
// slot schedule (each of hostKinds, played one after the other), and
// claims them: after the miner's first GPU round of the epoch, so that a
// short epoch still measures the GPU, and after hostAt (hostSetAt:
// validator.host_rounds sets, each in its own part of the epoch). A host
// set may start in a GPU round's random pause.
func (v *Validator) hostDue(e *minerEntry, p peer.ID, epoch uint64, now time.Time) []byte {
	if e.epoch != epoch || len(e.classes) == 0 {
		return nil
	}
	if e.hostAtEpoch != epoch+1 {
		if len(v.hostKinds(p, e.ann)) == 0 {
			return nil // host rounds off: the round schedule's random draws stay as they were
		}
		e.hostAtEpoch, e.hostSets = epoch+1, v.env.Config.Validator.HostRounds
		e.hostAt = v.hostSetAt(e, p, epoch, 0)
	}
	if e.hostSets == 0 || now.Before(e.hostAt) {
		return nil
	}
	e.hostSets--
	if j := v.env.Config.Validator.HostRounds - e.hostSets; e.hostSets > 0 {
		e.hostAt = v.hostSetAt(e, p, epoch, j)
	}
	return v.hostKinds(p, e.ann)
}

// hostSetAt is when set j of the epoch's validator.host_rounds = k may
// start: a uniform draw from the first half of the epoch's j-th k-th, so
// that sets are spread over the epoch.
func (v *Validator) hostSetAt(e *minerEntry, p peer.ID, epoch uint64, j int) time.Time {
	l := v.env.Config.Network.EpochLength.Duration
	part := l / time.Duration(max(1, v.env.Config.Validator.HostRounds))
	return time.Unix(0, int64(epoch)*int64(l)).Add(time.Duration(j)*part + time.Duration(v.minerRand(e, p).Float64()*float64(part/2)))
}

// playHost runs the host rounds kinds, numbered from rnd, in a miner's
// slot and reports each before the rounds' epoch can close.
func (v *Validator) playHost(ctx context.Context, kinds []byte, ep, rnd uint64, p peer.ID, ann *pb.MinerAnnounce) {
	defer v.wg.Done()
	start := time.Now()
	net := v.env.Config.Network
	rctx, cancel := context.WithDeadlineCause(ctx, epoch.RoundsCutoff(ep, net.FinalityEpochs, net.EpochLength.Duration), errRoundCutoff)
	defer cancel()
	var recs []*store.HostRecord
	v.mu.Lock()
	var stepNs [hostround.KindPlot + 1]float64
	if e := v.miners[p]; e != nil {
		stepNs = e.hostStepNs
	}
	v.mu.Unlock()
	// One round trip for the set: pings before each kind would hold the
	// miner 3ρ between kinds, past the round.OpeningLag within which it
	// takes the next one from a distant validator.
	rtt := v.sizingRTT(p, measureRTT(rctx, v.env.Host, v.env.Log, p))
	for i, k := range kinds {
		res, err := v.runHost(rctx, k, p, ann, ep, rnd+uint64(i), stepNs[k], rtt)
		switch {
		case ctx.Err() != nil || rctx.Err() != nil:
			// Shutdown or the epoch's cutoff: no evidence either way.
		case err != nil && res == nil:
			v.env.Log.Warn("host round not played", "miner", p, "epoch", ep, "kind", k, "err", err)
		case err != nil:
			// Sized but not served (a refused or failed stream): missed,
			// counting 0, so a miner cannot leave a host slot unrecorded.
			res.Out = hostround.Outcome{Missed: true, Reason: "not served: " + err.Error()}
			fallthrough
		default:
			if rec := v.reportHost(ep, rnd+uint64(i), p, res); rec != nil {
				recs = append(recs, rec)
				if rec.Verdict == store.VerdictVerified {
					stepNs[k] = plan.SizingStepNs(rec, res.Plan.Challenge.Proof.Dims().Steps)
				}
			}
		}
	}
	v.mu.Lock()
	if e := v.miners[p]; e != nil {
		e.hostHeld.set(time.Now(), time.Time{})
		e.hostBusy, e.hostEnded = false, time.Now()
		e.hostStepNs = stepNs
		if v.sched == nil {
			// The duty cycle paces GPU rounds; a host set, a short
			// measurement, ran in a GPU round's pause and keeps it.
			e.next = later(e.next, start.Add(v.env.ChallengeEvery))
		}
	}
	v.epochs.End(ep)
	v.closed.Broadcast()
	v.mu.Unlock()
	v.onHosts(recs)
}

// reportHost logs and stores a played host round; it returns the stored
// record, nil if storing failed.
func (v *Validator) reportHost(ep, rnd uint64, p peer.ID, res *HostResult) *store.HostRecord {
	rec := res.Record(ep, rnd, p, v.id())
	stored := rec
	if err := v.store.PutHost(rec); err != nil {
		v.env.Log.Error("storing host evidence failed", "miner", p, "err", err)
		stored = nil
	}
	o, pr := res.Out, res.Plan.Challenge.Proof
	if _, m, ok := epoch.HostMeasurement(rec); ok {
		h := m.ProvenHost()
		v.env.Log.Info("host round verified", "miner", p, "epoch", ep, "kind", pr.Name(), "chains", pr.Dims().Chains,
			"step_ns", fmt.Sprintf("%.1f", float64(epoch.HostElapsed(rec).Nanoseconds())/float64(pr.Dims().Steps)),
			"cores", h.CPUCores, "core_ghz", fmt.Sprintf("%.3g", h.CPUGHz), "ram_bytes", h.RAMBytes, "ram_gbps", fmt.Sprintf("%.3g", h.RAMGBps),
			"storage_bytes", h.StorageBytes, "storage_mbps", fmt.Sprintf("%.3g", h.StorageMBps), "verify_ms", res.verifyNanos/1e6)
	} else {
		v.env.Log.Warn("host round failed", "miner", p, "epoch", ep, "kind", pr.Name(), "missed", o.Missed, "reason", o.Reason)
	}
	return stored
}

// Record is the round's evidence.
func (res *HostResult) Record(epoch, rnd uint64, miner, validator peer.ID) *store.HostRecord {
	o := res.Out
	rec := &store.HostRecord{Epoch: epoch, Round: rnd, Miner: []byte(miner), Validator: []byte(validator),
		Challenge: res.Plan.Challenge.Encode(), Secret: res.Plan.Secret, RTTNanos: res.Plan.RTT.Nanoseconds(),
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
