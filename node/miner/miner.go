package miner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// served is a committed round: what tile requests need, and no output.
type served struct {
	c       *Challenge
	chain   proof.Chain
	params  [][]proof.Params // per step, per sub-challenge
	leaves  [][][]commit.CV  // tile chaining values per step, per sub-challenge
	roots   [][]commit.CV    // per step
	expires time.Time
	fetches int // tile requests taken (claimFetch)
}

// maxTileFetches bounds how often a round's tiles are served: each serving
// recomputes the sampled tiles, and the validator fetches once, or twice
// after a broken stream.
const maxTileFetches = 2

// New returns the miner of env; Start starts it.
func New(env Env) *Miner {
	m := &Miner{Env: env, slots: make(chan struct{}, env.Config.QueueLength), served: map[[32]byte]*served{}, queues: map[peer.ID]*valQueue{}}
	if items := env.Config.RAMBytes / 64; items >= 2 {
		m.ram = &ramHolder{miner: []byte(env.Host.ID()), items: min(items, memwalk.MaxItems), workers: env.Config.Workers}
	}
	return m
}

// Start serves the round, proof and host streams and starts announcing,
// until ctx ends; Stop waits for what Start started.
func (m *Miner) Start(ctx context.Context) {
	m.ctx = ctx
	m.Host.SetStreamHandler(protocol.ProofProtocol, m.handleStream)
	m.Host.SetStreamHandler(protocol.RoundProtocol, func(s network.Stream) { m.handleRound(ctx, s) })
	m.Host.SetStreamHandler(hostround.Protocol, m.handleHost)
	if d := max(m.Hooks.Delay, m.Hooks.PongDelay); d > 0 || m.Hooks.HoldLaterPongs > 0 {
		slowPings(ctx, m.Host, d, max(d, m.Hooks.HoldLaterPongs))
	}
	m.wg.Add(2)
	go m.announceLoop(ctx)
	go m.janitor(ctx)
	if m.ram != nil {
		m.wg.Add(1)
		go m.ramLoop(ctx.Done())
	}
}

// Stop removes the stream handlers, waits for the rounds in play and
// forgets the served ones.
func (m *Miner) Stop() {
	m.Host.RemoveStreamHandler(protocol.ProofProtocol)
	m.Host.RemoveStreamHandler(protocol.RoundProtocol)
	m.Host.RemoveStreamHandler(hostround.Protocol)
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.served)
}

func (m *Miner) announceLoop(ctx context.Context) {
	defer m.wg.Done()
	// Sequence numbers start at the clock so a restarted miner's announces
	// are not ignored as stale.
	seq := uint64(time.Now().UnixNano())
	t := time.NewTicker(m.Config.AnnounceInterval)
	defer t.Stop()
	// A validator connecting (or subscribing) hears the announce at once,
	// not an announce interval later; one toggling its subscription gets
	// at most one a ReannounceGap.
	joined, err := m.Gossip.Listeners(ctx, protocol.TopicAnnounce)
	if err != nil {
		m.Log.Warn("announcing only every interval", "err", err)
	}
	for {
		seq++
		m.announce(ctx, seq)
		last := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-joined:
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(last.Add(ReannounceGap))):
			}
		}
	}
}

// ReannounceGap is the least time between a miner's announces that
// validators joining the announce topic prompt.
const ReannounceGap = 5 * time.Second

// announce publishes the miner's announce numbered seq.
func (m *Miner) announce(ctx context.Context, seq uint64) {
	ann := &pb.MinerAnnounce{Version: protocol.Version, Seq: seq, Backend: m.Backend.Name(),
		Precisions: []uint32{uint32(proof.FP16), uint32(proof.FP32)}, MaxOutputBytes: m.Config.MaxOutputBytes,
		Hardware: m.Hardware, Gpus: m.GPUs}
	if m.ram != nil {
		ann.RamItems = m.ram.items
	}
	if m.Plot != nil {
		ann.Plot, ann.PlotRoot = m.Plot.Params.Encode(), m.Plot.Root[:]
	}
	if m.Hooks.AlterAnnounce != nil {
		m.Hooks.AlterAnnounce(ann)
	}
	m.announced.Store(ann)
	if _, err := m.Gossip.Publish(ctx, protocol.TopicAnnounce, ann); err != nil && ctx.Err() == nil {
		m.Log.Warn("announce failed", "err", err)
	}
}

// admit checks a challenge received on a round stream with the same rules
// as gossip, and that this miner can hold it and a plan could give it
// (fits); a challenge refused by fits is returned with the error.
func (m *Miner) admit(raw []byte, from peer.ID) (*Challenge, error) {
	o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
	if err != nil {
		return nil, err
	}
	if o.Author != from {
		return nil, fmt.Errorf("challenge signed by %s, sent by %s", o.Author, from)
	}
	c, err := m.Gossip.Admit(o)
	if err != nil {
		return nil, err
	}
	if c.Miner != m.Host.ID() {
		return nil, errors.New("challenge for another miner")
	}
	return c, m.fits(c)
}

// valQueue is one validator's place at the miner.
type valQueue struct {
	turn  chan struct{} // held by the round in play
	users int           // rounds in play or waiting: at most 2
}

// queueWait is how long a validator's next round waits for its previous
// one to end (the previous round's result frame and stream close race the
// next challenge).
const queueWait = 2 * time.Second

// enqueue joins validator's queue, or returns nil if it is full.
func (m *Miner) enqueue(validator peer.ID) *valQueue {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[validator]
	if q == nil {
		q = &valQueue{turn: make(chan struct{}, 1)}
		m.queues[validator] = q
	}
	if q.users >= 2 {
		return nil
	}
	q.users++
	return q
}

// leave leaves the queue; an empty one is forgotten, so any peer opening
// streams cannot grow the map.
func (m *Miner) leave(validator peer.ID, q *valQueue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q.users--; q.users == 0 {
		delete(m.queues, validator)
	}
}

// handleRound plays one round a validator opened.
func (m *Miner) handleRound(ctx context.Context, st network.Stream) {
	from := st.Conn().RemotePeer()
	if at := time.Now(); !m.onSchedule(from, "gpu") {
		m.keepOffSchedule(st, from, at)
		st.Reset()
		return
	}
	// One round per validator at a time, one more waiting for it: a
	// validator flooding challenges holds one slot, never the others'.
	q := m.enqueue(from)
	if q == nil {
		m.Log.Warn("refusing a round: this validator already has a round in play and one waiting", "validator", from)
		st.Reset()
		return
	}
	defer m.leave(from, q)
	select {
	case q.turn <- struct{}{}:
		defer func() { <-q.turn }()
	case <-ctx.Done():
		st.Reset()
		return
	case <-time.After(queueWait):
		m.Log.Warn("refusing a round: this validator's previous round is still in play", "validator", from)
		st.Reset()
		return
	}
	select {
	case m.slots <- struct{}{}:
		defer func() { <-m.slots }()
	default:
		m.Log.Warn("refusing a round: already playing queue_length rounds", "validator", from)
		st.Reset()
		return
	}
	m.wg.Add(1)
	defer m.wg.Done()
	end := stream.End{S: st}
	defer end.Reset()
	if m.Hooks.Skip != nil && m.Hooks.Skip(from, false) {
		st.Reset()
		return
	}
	st.SetReadDeadline(time.Now().Add(m.waitCap()))
	r := bufio.NewReader(st)
	f, err := protocol.ReadRoundFrame(r)
	if err != nil || f.GetChallenge() == nil {
		m.Log.Debug("bad round stream", "peer", from, "err", err)
		return
	}
	c, err := m.admit(f.GetChallenge(), from)
	if err != nil {
		if c != nil {
			m.played.refused(c, err)
		}
		m.Log.Warn("challenge refused", "validator", from, "err", err)
		return
	}
	// The round stream may bring the challenge before gossip does.
	if m.Observe != nil {
		m.Observe(time.Now(), from, c.Msg)
	}
	st.SetReadDeadline(time.Time{})
	st.SetDeadline(time.Now().Add(time.Duration(c.Msg.DeadlineMs)*time.Millisecond + m.Config.ProofWindow))
	chain := proof.Chain{ID: c.ID, Template: c.Params, Steps: int(c.Msg.Steps)}
	mm, err := round.NewMiner(chain)
	if err != nil {
		m.Log.Warn("challenge refused", "validator", from, "err", err)
		return
	}
	mm.Hold = m.Hooks.HoldRoots
	// The round's work stops when the round ends, whatever step it is in:
	// an abandoned round holds the device no longer.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	d := &mdriver{m: m, ctx: rctx, c: c, mm: mm, rs: stream.NewRound(st),
		sv: &served{c: c, chain: chain}, start: time.Now()}
	d.run(r)
	end.Close()
}

// mdriver wires a round.Miner to the backend and the round stream.
type mdriver struct {
	m     *Miner
	ctx   context.Context
	c     *Challenge
	mm    *round.Miner
	rs    *stream.Round
	sv    *served
	start time.Time
	out   chan *pb.RoundFrame // delayed sends (Hooks.Delay)
}

type stepResult struct {
	step   int
	leaves [][]commit.CV
	roots  []commit.CV
	err    error
}

func (d *mdriver) run(r *bufio.Reader) {
	done := make(chan struct{})
	defer close(done)
	frames := stream.ReadFrames(r, done)
	results := make(chan stepResult, 1)
	if d.m.Hooks.Delay > 0 {
		d.out = make(chan *pb.RoundFrame, proof.MaxSteps+2)
		defer close(d.out)
		go d.delayed(done)
	}
	acts := d.mm.Begin()
	// Each wait on the validator is capped: its beacons, in all, by
	// waitCap; its verdict after the commitment by resultWait. The
	// commitment is due by the challenge's deadline (which fits bounds):
	// past it the round is abandoned, its work stopped.
	var stall round.Stall
	stallT := time.NewTimer(0)
	defer stallT.Stop()
	deadline := time.Duration(d.c.Msg.DeadlineMs) * time.Millisecond
	due := time.NewTimer(time.Until(d.start.Add(deadline)))
	defer due.Stop()
	dueC := due.C
	for {
		for _, a := range acts {
			switch a := a.(type) {
			case round.Compute:
				d.sv.params = append(d.sv.params, a.Params)
				go func() { results <- d.m.computeStep(d.ctx, a.Step, a.Params) }()
			case round.SendRoot:
				roots := make([][]byte, len(a.Roots))
				for i := range a.Roots {
					roots[i] = a.Roots[i][:]
				}
				d.send(&pb.RoundFrame{Msg: &pb.RoundFrame_Root{Root: &pb.StepRoot{Step: uint32(a.Step), Roots: roots}}})
			case round.Commit:
				dueC = nil
				d.commit(a.Roots)
				d.rs.S.SetReadDeadline(time.Now().Add(d.m.resultWait()))
			case round.Report:
				res := a.Result
				d.m.forget(d.c.ID)
				d.m.played.result(d.c, d.sv.chain.Steps, &res, "")
				d.m.Log.Info("round result", "validator", d.c.Validator, "round", d.c.Msg.Round, "steps", d.sv.chain.Steps,
					"verified", res.Verified, "reason", res.Reason, "tflops", fmt.Sprintf("%.4f", res.TFLOPS),
					"peak_tflops", fmt.Sprintf("%.4f", res.PeakTFLOPS))
				return
			case round.Abort:
				d.m.played.result(d.c, d.sv.chain.Steps, nil, a.Reason)
				d.m.Log.Warn("round abandoned", "validator", d.c.Validator, "round", d.c.Msg.Round, "reason", a.Reason)
				return
			}
		}
		now := time.Now()
		stall.Note(d.mm.Waiting(), now)
		var stalled <-chan time.Time
		if d.mm.Waiting() {
			stallT.Reset(stall.Left(d.m.waitCap(), now))
			stalled = stallT.C
		}
		select {
		case <-dueC:
			acts = []any{round.Abort{Reason: fmt.Sprintf("no commitment by the challenge's deadline of %v", deadline)}}
		case <-stalled:
			acts = []any{round.Abort{Reason: fmt.Sprintf("beacons kept the miner waiting over %v", d.m.waitCap())}}
		case res := <-results:
			if res.err != nil {
				d.m.played.result(d.c, d.sv.chain.Steps, nil, "step computation failed: "+res.err.Error())
				d.m.Log.Error("step computation failed", "step", res.step, "err", res.err)
				return
			}
			if h := d.m.Hooks.HoldLastRoot; h > 0 && res.step == d.sv.chain.Steps-1 && d.c.Msg.MinTimedMs > 0 {
				select {
				case <-time.After(h):
				case <-d.ctx.Done():
					return
				}
			}
			d.sv.leaves = append(d.sv.leaves, res.leaves)
			acts = d.mm.Step(round.StepDone{Step: res.step, Roots: res.roots})
		case fr := <-frames:
			acts = d.mm.Step(minerEvent(fr))
		case <-d.ctx.Done():
			return
		}
	}
}

func minerEvent(fr stream.Arrival) any {
	if fr.Err != nil {
		return round.Closed{Err: fr.Err}
	}
	switch m := fr.F.Msg.(type) {
	case *pb.RoundFrame_Beacon:
		return round.BeaconIn{Step: int(m.Beacon.Step), Beacon: [32]byte(m.Beacon.Beacon)}
	case *pb.RoundFrame_Result:
		r := m.Result
		return round.ResultIn{Result: round.Result{Verified: r.Verified, Reason: r.Reason, TFLOPS: r.Tflops, PeakTFLOPS: r.PeakTflops}}
	}
	return round.Closed{Err: fmt.Errorf("unexpected %T frame from the validator", fr.F.Msg)}
}

// send writes a frame now or, for a miner faking distance, after Delay.
func (d *mdriver) send(f *pb.RoundFrame) {
	if d.out != nil {
		d.out <- f
		return
	}
	if err := d.rs.Send(f); err != nil {
		d.m.Log.Debug("round stream write failed", "err", err)
	}
}

func (d *mdriver) delayed(done <-chan struct{}) {
	type item struct {
		f  *pb.RoundFrame
		at time.Time
	}
	q := make(chan item, cap(d.out))
	go func() {
		for f := range d.out {
			q <- item{f, time.Now().Add(d.m.Hooks.Delay)}
		}
	}()
	for {
		select {
		case it := <-q:
			select {
			case <-time.After(time.Until(it.at)):
				d.rs.Send(it.f)
			case <-done:
				return
			}
		case <-done:
			return
		}
	}
}

// commit signs the commitment to every root, keeps what tile requests
// need, gossips it and sends it on the round stream.
func (d *mdriver) commit(roots [][]commit.CV) {
	if h := d.m.Hooks.HoldCommitment; h > 0 {
		select {
		case <-time.After(h):
		case <-d.ctx.Done():
			return
		}
	}
	var flat [][]byte
	for _, step := range roots {
		for _, r := range step {
			flat = append(flat, slices.Clone(r[:]))
		}
	}
	d.sv.roots = roots
	d.sv.expires = time.Now().Add(d.m.Config.ProofWindow)
	ms := time.Since(d.start).Milliseconds()
	raw, err := d.m.Gossip.Publish(d.ctx, protocol.TopicCommitment, &pb.Commitment{Version: protocol.Version, ChallengeId: d.c.ID[:], Roots: flat, ComputeMs: uint64(ms)})
	if raw == nil {
		d.m.Log.Error("sealing commitment failed", "err", err)
		return
	}
	if err != nil {
		d.m.Log.Warn("gossiping commitment failed", "err", err)
	}
	d.m.mu.Lock()
	d.m.served[d.c.ID] = d.sv
	d.m.mu.Unlock()
	d.send(&pb.RoundFrame{Msg: &pb.RoundFrame_Commitment{Commitment: raw}})
	d.m.Log.Info("committed", "validator", d.c.Validator, "round", d.c.Msg.Round, "steps", len(roots), "compute_ms", ms)
}

// computeStep runs one step's sub-challenges, sub-challenge i on device
// i mod Devices, devices concurrently. Each job is hashed and closed at
// once: only its tile chaining values are kept.
func (m *Miner) computeStep(ctx context.Context, step int, params []proof.Params) stepResult {
	n := len(params)
	res := stepResult{step: step, leaves: make([][]commit.CV, n), roots: make([]commit.CV, n)}
	devices := max(1, min(m.Backend.Devices(), n))
	errs := make([]error, devices)
	var wg sync.WaitGroup
	for dev := 0; dev < devices; dev++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := dev; i < n && errs[dev] == nil; i += devices {
				res.leaves[i], res.roots[i], errs[dev] = m.hashJob(ctx, params[i], dev)
			}
		}()
	}
	wg.Wait()
	res.err = errors.Join(errs...)
	return res
}

func (m *Miner) hashJob(ctx context.Context, p proof.Params, device int) ([]commit.CV, commit.CV, error) {
	job, err := m.Backend.Start(p, kernels.Options{Workers: m.Config.Workers, Device: device})
	if err != nil {
		return nil, commit.CV{}, err
	}
	defer job.Close()
	leaves, err := kernels.Compute(ctx, job)
	if err != nil {
		return nil, commit.CV{}, err
	}
	root, err := commit.Root(leaves)
	return leaves, root, err
}

// forget drops round id's tile chaining values once its validator has
// given its verdict, which follows its tile request: kept for the whole
// proof window, they were a quarter of a 1,000-miner network's heap
// (BENCHMARKS.md).
func (m *Miner) forget(id [32]byte) {
	m.mu.Lock()
	delete(m.served, id)
	m.mu.Unlock()
}

// Held is how many committed rounds the miner holds for tile requests.
func (m *Miner) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.served)
}

// janitor forgets rounds whose proof window has closed (their validator
// gave no verdict).
func (m *Miner) janitor(ctx context.Context) {
	defer m.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.mu.Lock()
			for id, s := range m.served {
				if now.After(s.expires) {
					delete(m.served, id)
				}
			}
			m.mu.Unlock()
		}
	}
}

// handleStream serves one tile request: the requester must be the
// challenge's validator and its indices must follow from the revealed
// secret and every root. Sampled tiles are recomputed, not stored.
func (m *Miner) handleStream(st network.Stream) {
	st.SetDeadline(time.Now().Add(stream.Deadline))
	raw, err := protocol.ReadFrame(bufio.NewReader(st), protocol.MaxEnvelope(pb.MessageType_TILE_REQUEST))
	if err != nil {
		st.Reset()
		return
	}
	o, err := protocol.Open(raw, pb.MessageType_TILE_REQUEST)
	if err != nil || o.Author != st.Conn().RemotePeer() {
		m.Log.Debug("bad tile request", "peer", st.Conn().RemotePeer(), "err", err)
		st.Reset()
		return
	}
	req := o.Msg.(*pb.TileRequest)
	id := [32]byte(req.ChallengeId)
	fail := func(reason string) {
		if b, err := protocol.Seal(m.Key, &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:], Error: reason}); err == nil {
			protocol.WriteFrame(st, b)
		}
		st.Close()
	}
	s, refusal := m.claimFetch(id, o.Author)
	if refusal != "" {
		fail(refusal)
		return
	}
	idx, err := s.chain.Sample([32]byte(req.Secret), [32]byte(s.c.Msg.SecretCommitment), s.roots, int(s.c.Msg.Samples))
	if err != nil {
		fail(err.Error())
		return
	}
	if !slices.Equal(idx, req.Indices) {
		fail("requested indices do not follow from the secret and roots")
		return
	}
	refusal, err = m.writeTiles(st, s, id, idx)
	switch {
	case refusal != "":
		fail(refusal)
	case err != nil:
		m.Log.Warn("serving tiles failed", "validator", o.Author, "err", err)
		st.Reset()
	default:
		st.Close()
	}
}

// claimFetch takes one of round id's tile requests for from: its state, or
// why it is refused.
func (m *Miner) claimFetch(id [32]byte, from peer.ID) (*served, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.served[id]
	switch {
	case s == nil:
		return nil, "unknown challenge or proof window closed"
	case from != s.c.Validator:
		return nil, "only the challenge's validator may request tiles"
	case s.fetches >= maxTileFetches:
		return nil, fmt.Sprintf("tiles already served %d times", maxTileFetches)
	}
	s.fetches++
	return s, ""
}

// writeTiles writes the response to a checked tile request: the batch
// proofs of the sampled tiles' groups, then each tile, recomputed. A
// refusal is written before anything else; err is a failed write.
func (m *Miner) writeTiles(st network.Stream, s *served, id [32]byte, idx []uint64) (refusal string, err error) {
	groups := s.chain.Groups(idx)
	// Every buffer this response holds (the proofs, their sealed frame and
	// one tile) is reserved in the stream's scope before it is built.
	tileBytes := s.chain.Template[0].TileBytes()
	need := tileBytes + 2*proofBytes(s.chain.Template[0].Tiles(), groups)
	if err := st.Scope().ReserveMemory(need, network.ReservationPriorityMedium); err != nil {
		return "busy: proof stream memory budget exhausted", nil
	}
	defer st.Scope().ReleaseMemory(need)
	resp := &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:]}
	for _, g := range groups {
		pr, err := commit.Prove(s.leaves[g.Step][g.Sub], g.Tiles)
		if err != nil {
			return err.Error(), nil
		}
		b, _ := pr.MarshalBinary()
		resp.Proofs = append(resp.Proofs, b)
	}
	head, err := protocol.Seal(m.Key, resp)
	if err != nil {
		return err.Error(), nil
	}
	w := bufio.NewWriter(st)
	err = protocol.WriteFrame(w, head)
	tile := make([]byte, tileBytes)
	for _, g := range groups {
		for _, x := range g.Tiles {
			if err != nil {
				break
			}
			if err = kernels.ComputeTile(m.ctx, m.Backend, s.params[g.Step][g.Sub], x, tile); err == nil {
				err = protocol.WriteFrame(w, tile)
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	return "", err
}

// proofBytes bounds the encoded batch proofs of groups over tiles leaves:
// each opened tile needs at most one sibling per tree level.
func proofBytes(tiles uint64, groups []proof.Group) int {
	n := 0
	for _, g := range groups {
		n += 4 + 32*len(g.Tiles)*(bits.Len64(tiles)+1)
	}
	return n
}
