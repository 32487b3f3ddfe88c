package node

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
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
)

// RoundHooks alter how a miner plays rounds. Only the testnet's
// adversaries set them.
type RoundHooks struct {
	// HoldRoots keeps roots back until a beacon is needed (burst).
	HoldRoots bool
	// Delay holds every root, the commitment and every ping reply back
	// this long (a miner faking distance).
	Delay time.Duration
	// Skip, if set and true for a round (host false) or host round from
	// validator, drops its stream unanswered (a miner that is up only
	// part of the time).
	Skip func(validator peer.ID, host bool) bool
	// HostProve, if set, replaces cpuwork.Prove in CPU host rounds.
	HostProve func(*cpuwork.Params) ([][]byte, error)
	// RAMSource, if set, serves RAM host rounds instead of the dataset.
	RAMSource func(*memwalk.Dataset) memwalk.Source
	// PlotReader, if set, serves storage host rounds instead of the plot.
	PlotReader func(plot.Reader, *plot.Plot) plot.Reader
	// HostTime, if set, is how long a host proof of kind ("cpu", "ram",
	// "storage") and shape takes on the miner's host: its root is held
	// until then (the testnet's simulated hosts, whose work takes no
	// virtual time).
	HostTime func(kind string, sh host.Shape) time.Duration
}

// miner plays the rounds validators open with it: it computes each step as
// soon as its inputs are in, keeps only the tile chaining values, and
// recomputes the sampled tiles when asked.
type miner struct {
	n       *Node
	backend kernels.Backend
	slots   chan struct{} // rounds played at once
	hooks   RoundHooks

	hostBusy sync.Mutex // held by the host round in play (hostround.go)
	ram      *ramHolder // the RAM dataset; nil without miner.ram_bytes
	plot     *Plot      // nil without a plot

	mu       sync.Mutex
	queues   map[peer.ID]*valQueue // per validator: one round in play, one waiting
	served   map[[32]byte]*served
	wg       sync.WaitGroup
	hardware *pb.Hardware
	gpus     []*pb.GPU
	played   played // for the local API (played.go)
	// hostChain is the validator whose host rounds run back to back
	// (offschedule.go).
	hostChain hostChain
}

// served is a committed round: what tile requests need, and no output.
type served struct {
	c       *openChallenge
	chain   proof.Chain
	params  [][]proof.Params // per step, per sub-challenge
	leaves  [][][]commit.CV  // tile chaining values per step, per sub-challenge
	roots   [][]commit.CV    // per step
	expires time.Time
}

func newMiner(n *Node, be kernels.Backend, hooks RoundHooks) *miner {
	return &miner{n: n, backend: be, slots: make(chan struct{}, n.cfg.Miner.QueueLength), hooks: hooks, served: map[[32]byte]*served{}, queues: map[peer.ID]*valQueue{}}
}

func (m *miner) start(ctx context.Context) {
	m.n.host.SetStreamHandler(protocol.ProofProtocol, m.handleStream)
	m.n.host.SetStreamHandler(protocol.RoundProtocol, func(s network.Stream) { m.handleRound(ctx, s) })
	m.n.host.SetStreamHandler(hostround.Protocol, m.handleHost)
	if m.hooks.Delay > 0 {
		slowPings(m.n.host, m.hooks.Delay)
	}
	m.wg.Add(2)
	go m.announceLoop(ctx)
	go m.janitor(ctx)
	if m.ram != nil {
		m.wg.Add(1)
		go m.ramLoop(ctx.Done())
	}
}

func (m *miner) stop() {
	m.n.host.RemoveStreamHandler(protocol.ProofProtocol)
	m.n.host.RemoveStreamHandler(protocol.RoundProtocol)
	m.n.host.RemoveStreamHandler(hostround.Protocol)
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.served)
}

func (m *miner) announceLoop(ctx context.Context) {
	defer m.wg.Done()
	// Sequence numbers start at the clock so a restarted miner's announces
	// are not ignored as stale.
	seq := uint64(time.Now().UnixNano())
	t := time.NewTicker(m.n.cfg.Miner.AnnounceInterval.Duration)
	defer t.Stop()
	for {
		seq++
		ann := &pb.MinerAnnounce{Version: protocol.Version, Seq: seq, Backend: m.backend.Name(),
			Precisions: []uint32{uint32(proof.FP16), uint32(proof.FP32)}, MaxOutputBytes: m.n.cfg.Miner.MaxOutputBytes,
			Hardware: m.hardware, Gpus: m.gpus}
		if m.ram != nil {
			ann.RamItems = m.ram.items
		}
		if m.plot != nil {
			ann.Plot, ann.PlotRoot = m.plot.Params.Encode(), m.plot.Root[:]
		}
		if _, err := m.n.publish(ctx, protocol.TopicAnnounce, ann); err != nil && ctx.Err() == nil {
			m.n.log.Warn("announce failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// admit checks a challenge received on a round stream with the same rules
// as gossip, and that this miner can hold it.
func (m *miner) admit(raw []byte, from peer.ID) (*openChallenge, error) {
	o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
	if err != nil {
		return nil, err
	}
	if o.Author != from {
		return nil, fmt.Errorf("challenge signed by %s, sent by %s", o.Author, from)
	}
	id := protocol.ID(o.Body)
	c := m.n.view.challenge(id)
	if c == nil {
		if d := m.n.view.checkChallenge(o, from, time.Now()); d.result != accept.result {
			return nil, errors.New(d.reason)
		}
		if c = m.n.view.challenge(id); c == nil {
			return nil, errors.New("challenge evicted")
		}
	}
	if c.miner != m.n.ID() {
		return nil, errors.New("challenge for another miner")
	}
	for i, p := range c.params {
		if p.OutputBytes() > m.n.cfg.Miner.MaxOutputBytes {
			return nil, fmt.Errorf("sub-challenge %d needs %d output bytes, capacity %d", i, p.OutputBytes(), m.n.cfg.Miner.MaxOutputBytes)
		}
	}
	return c, nil
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
func (m *miner) enqueue(validator peer.ID) *valQueue {
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
func (m *miner) leave(validator peer.ID, q *valQueue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q.users--; q.users == 0 {
		delete(m.queues, validator)
	}
}

// handleRound plays one round a validator opened.
func (m *miner) handleRound(ctx context.Context, st network.Stream) {
	from := st.Conn().RemotePeer()
	if !m.onSchedule(from, "gpu") {
		st.Reset()
		return
	}
	// One round per validator at a time, one more waiting for it: a
	// validator flooding challenges holds one slot, never the others'.
	q := m.enqueue(from)
	if q == nil {
		m.n.log.Warn("refusing a round: this validator already has a round in play and one waiting", "validator", from)
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
		m.n.log.Warn("refusing a round: this validator's previous round is still in play", "validator", from)
		st.Reset()
		return
	}
	select {
	case m.slots <- struct{}{}:
		defer func() { <-m.slots }()
	default:
		m.n.log.Warn("refusing a round: already playing queue_length rounds", "validator", from)
		st.Reset()
		return
	}
	m.wg.Add(1)
	defer m.wg.Done()
	end := streamEnd{s: st}
	defer end.reset()
	if m.hooks.Skip != nil && m.hooks.Skip(from, false) {
		st.Reset()
		return
	}
	st.SetReadDeadline(time.Now().Add(m.waitCap()))
	r := bufio.NewReader(st)
	f, err := protocol.ReadRoundFrame(r)
	if err != nil || f.GetChallenge() == nil {
		m.n.log.Debug("bad round stream", "peer", from, "err", err)
		return
	}
	c, err := m.admit(f.GetChallenge(), from)
	if err != nil {
		m.n.log.Warn("challenge refused", "validator", from, "err", err)
		return
	}
	// The round stream may bring the challenge before gossip does.
	m.n.obs.gossip(time.Now(), from, c.msg, nil)
	st.SetReadDeadline(time.Time{})
	st.SetDeadline(time.Now().Add(time.Duration(c.msg.DeadlineMs)*time.Millisecond + m.n.cfg.Miner.ProofWindow.Duration))
	chain := proof.Chain{ID: c.id, Template: c.params, Steps: int(c.msg.Steps)}
	mm, err := round.NewMiner(chain)
	if err != nil {
		m.n.log.Warn("challenge refused", "validator", from, "err", err)
		return
	}
	mm.Hold = m.hooks.HoldRoots
	d := &mdriver{m: m, ctx: ctx, c: c, mm: mm, rs: &roundStream{s: st, w: bufio.NewWriter(st)},
		sv: &served{c: c, chain: chain}, start: time.Now()}
	d.run(r)
	end.close()
}

// mdriver wires a round.Miner to the backend and the round stream.
type mdriver struct {
	m     *miner
	ctx   context.Context
	c     *openChallenge
	mm    *round.Miner
	rs    *roundStream
	sv    *served
	start time.Time
	out   chan *pb.RoundFrame // delayed sends (RoundHooks.Delay)
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
	frames := readFrames(r, done)
	results := make(chan stepResult, 1)
	if d.m.hooks.Delay > 0 {
		d.out = make(chan *pb.RoundFrame, proof.MaxSteps+2)
		defer close(d.out)
		go d.delayed(done)
	}
	acts := d.mm.Begin()
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
				d.commit(a.Roots)
			case round.Report:
				res := a.Result
				d.m.played.result(d.c, d.sv.chain.Steps, &res, "")
				d.m.n.log.Info("round result", "validator", d.c.validator, "round", d.c.msg.Round, "steps", d.sv.chain.Steps,
					"verified", res.Verified, "reason", res.Reason, "tflops", fmt.Sprintf("%.4f", res.TFLOPS),
					"peak_tflops", fmt.Sprintf("%.4f", res.PeakTFLOPS))
				return
			case round.Abort:
				d.m.played.result(d.c, d.sv.chain.Steps, nil, a.Reason)
				d.m.n.log.Warn("round abandoned", "validator", d.c.validator, "round", d.c.msg.Round, "reason", a.Reason)
				return
			}
		}
		select {
		case res := <-results:
			if res.err != nil {
				d.m.played.result(d.c, d.sv.chain.Steps, nil, "step computation failed: "+res.err.Error())
				d.m.n.log.Error("step computation failed", "step", res.step, "err", res.err)
				return
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

func minerEvent(fr arrival) any {
	if fr.err != nil {
		return round.Closed{Err: fr.err}
	}
	switch m := fr.f.Msg.(type) {
	case *pb.RoundFrame_Beacon:
		return round.BeaconIn{Step: int(m.Beacon.Step), Beacon: [32]byte(m.Beacon.Beacon)}
	case *pb.RoundFrame_Result:
		r := m.Result
		return round.ResultIn{Result: round.Result{Verified: r.Verified, Reason: r.Reason, TFLOPS: r.Tflops, PeakTFLOPS: r.PeakTflops}}
	}
	return round.Closed{Err: fmt.Errorf("unexpected %T frame from the validator", fr.f.Msg)}
}

// send writes a frame now or, for a miner faking distance, after Delay.
func (d *mdriver) send(f *pb.RoundFrame) {
	if d.out != nil {
		d.out <- f
		return
	}
	if err := d.rs.send(f); err != nil {
		d.m.n.log.Debug("round stream write failed", "err", err)
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
			q <- item{f, time.Now().Add(d.m.hooks.Delay)}
		}
	}()
	for {
		select {
		case it := <-q:
			select {
			case <-time.After(time.Until(it.at)):
				d.rs.send(it.f)
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
	var flat [][]byte
	for _, step := range roots {
		for _, r := range step {
			flat = append(flat, slices.Clone(r[:]))
		}
	}
	d.sv.roots = roots
	d.sv.expires = time.Now().Add(d.m.n.cfg.Miner.ProofWindow.Duration)
	ms := time.Since(d.start).Milliseconds()
	raw, err := d.m.n.publish(d.ctx, protocol.TopicCommitment, &pb.Commitment{Version: protocol.Version, ChallengeId: d.c.id[:], Roots: flat, ComputeMs: uint64(ms)})
	if raw == nil {
		d.m.n.log.Error("sealing commitment failed", "err", err)
		return
	}
	if err != nil {
		d.m.n.log.Warn("gossiping commitment failed", "err", err)
	}
	d.m.mu.Lock()
	d.m.served[d.c.id] = d.sv
	d.m.mu.Unlock()
	d.send(&pb.RoundFrame{Msg: &pb.RoundFrame_Commitment{Commitment: raw}})
	d.m.n.log.Info("committed", "validator", d.c.validator, "round", d.c.msg.Round, "steps", len(roots), "compute_ms", ms)
}

// computeStep runs one step's sub-challenges, sub-challenge i on device
// i mod Devices, devices concurrently. Each job is hashed and closed at
// once: only its tile chaining values are kept.
func (m *miner) computeStep(ctx context.Context, step int, params []proof.Params) stepResult {
	n := len(params)
	res := stepResult{step: step, leaves: make([][]commit.CV, n), roots: make([]commit.CV, n)}
	devices := max(1, min(m.backend.Devices(), n))
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

func (m *miner) hashJob(ctx context.Context, p proof.Params, device int) ([]commit.CV, commit.CV, error) {
	job, err := m.backend.Start(p, kernels.Options{Workers: m.n.cfg.Miner.Workers, Device: device})
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

// janitor forgets rounds whose proof window has closed.
func (m *miner) janitor(ctx context.Context) {
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
func (m *miner) handleStream(st network.Stream) {
	st.SetDeadline(time.Now().Add(streamDeadline))
	raw, err := protocol.ReadFrame(bufio.NewReader(st), protocol.MaxEnvelope(pb.MessageType_TILE_REQUEST))
	if err != nil {
		st.Reset()
		return
	}
	o, err := protocol.Open(raw, pb.MessageType_TILE_REQUEST)
	if err != nil || o.Author != st.Conn().RemotePeer() {
		m.n.log.Debug("bad tile request", "peer", st.Conn().RemotePeer(), "err", err)
		st.Reset()
		return
	}
	req := o.Msg.(*pb.TileRequest)
	id := [32]byte(req.ChallengeId)
	m.mu.Lock()
	s := m.served[id]
	m.mu.Unlock()
	fail := func(reason string) {
		if b, err := protocol.Seal(m.n.key, &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:], Error: reason}); err == nil {
			protocol.WriteFrame(st, b)
		}
		st.Close()
	}
	switch {
	case s == nil:
		fail("unknown challenge or proof window closed")
		return
	case o.Author != s.c.validator:
		fail("only the challenge's validator may request tiles")
		return
	}
	idx, err := s.chain.Sample([32]byte(req.Secret), [32]byte(s.c.msg.SecretCommitment), s.roots, int(s.c.msg.Samples))
	if err != nil {
		fail(err.Error())
		return
	}
	if !slices.Equal(idx, req.Indices) {
		fail("requested indices do not follow from the secret and roots")
		return
	}
	groups := s.chain.Groups(idx)
	// Every buffer this response holds (the proofs, their sealed frame and
	// one tile) is reserved in the stream's scope before it is built.
	tileBytes := s.chain.Template[0].TileBytes()
	need := tileBytes + 2*proofBytes(s.chain.Template[0].Tiles(), groups)
	if err := st.Scope().ReserveMemory(need, network.ReservationPriorityMedium); err != nil {
		fail("busy: proof stream memory budget exhausted")
		return
	}
	defer st.Scope().ReleaseMemory(need)
	resp := &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:]}
	for _, g := range groups {
		pr, err := commit.Prove(s.leaves[g.Step][g.Sub], g.Tiles)
		if err != nil {
			fail(err.Error())
			return
		}
		b, _ := pr.MarshalBinary()
		resp.Proofs = append(resp.Proofs, b)
	}
	head, err := protocol.Seal(m.n.key, resp)
	if err != nil {
		fail(err.Error())
		return
	}
	w := bufio.NewWriter(st)
	err = protocol.WriteFrame(w, head)
	tile := make([]byte, tileBytes)
	for _, g := range groups {
		for _, x := range g.Tiles {
			if err != nil {
				break
			}
			if err = kernels.ComputeTile(m.n.ctx, m.backend, s.params[g.Step][g.Sub], x, tile); err == nil {
				err = protocol.WriteFrame(w, tile)
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		m.n.log.Warn("serving tiles failed", "validator", o.Author, "err", err)
		st.Reset()
		return
	}
	st.Close()
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
