package node

import (
	"bufio"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// miner computes challenges addressed to this node, one at a time per
// device, and serves sampled tiles until the proof window closes.
type miner struct {
	n       *Node
	backend kernels.Backend
	queue   chan *openChallenge

	mu       sync.Mutex
	served   map[[32]byte]*served
	wg       sync.WaitGroup
	hardware *pb.Hardware
	gpus     []*pb.GPU
}

// served is a computed challenge whose outputs are kept for tile requests.
type served struct {
	mu      sync.RWMutex // readers serve tiles; the janitor closes jobs
	c       *openChallenge
	jobs    []kernels.Job
	leaves  [][]commit.CV
	roots   []commit.CV
	expires time.Time
}

func newMiner(n *Node, be kernels.Backend) *miner {
	return &miner{n: n, backend: be, queue: make(chan *openChallenge, n.cfg.Miner.QueueLength), served: map[[32]byte]*served{}}
}

func (m *miner) start(ctx context.Context) {
	m.n.host.SetStreamHandler(protocol.ProofProtocol, m.handleStream)
	m.wg.Add(3)
	go m.announceLoop(ctx)
	go m.work(ctx)
	go m.janitor(ctx)
}

func (m *miner) stop() {
	m.n.host.RemoveStreamHandler(protocol.ProofProtocol)
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, s := range m.served {
		s.close()
		delete(m.served, id)
	}
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

func (m *miner) onChallenge(ctx context.Context, v gossipVal) {
	c := m.n.view.challenge(protocol.ID(v.opened.Body))
	if c == nil || c.miner != m.n.ID() {
		return
	}
	for i, p := range c.params {
		if p.OutputBytes() > m.n.cfg.Miner.MaxOutputBytes {
			m.n.log.Warn("challenge exceeds capacity; not computing", "validator", c.validator, "sub", i, "bytes", p.OutputBytes())
			return
		}
	}
	select {
	case m.queue <- c:
	default:
		m.n.log.Warn("challenge queue full; dropping challenge", "validator", c.validator)
	}
}

func (m *miner) work(ctx context.Context) {
	defer m.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-m.queue:
			m.compute(ctx, c)
		}
	}
}

// compute runs every sub-challenge and publishes the roots. Sub-challenge i
// runs on device i mod Devices: one job per device at a time, devices
// concurrently, so a multi-GPU miner's throughput adds up.
func (m *miner) compute(ctx context.Context, c *openChallenge) {
	deadline := c.received.Add(time.Duration(c.msg.DeadlineMs) * time.Millisecond)
	if time.Now().After(deadline) {
		m.n.log.Warn("challenge expired in the queue", "validator", c.validator)
		return
	}
	start := time.Now()
	n := len(c.params)
	s := &served{c: c, jobs: make([]kernels.Job, n), leaves: make([][]commit.CV, n), roots: make([]commit.CV, n)}
	devices := max(1, min(m.backend.Devices(), n))
	errs := make([]error, devices)
	var wg sync.WaitGroup
	for d := 0; d < devices; d++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := d; i < n && errs[d] == nil; i += devices {
				s.jobs[i], s.leaves[i], s.roots[i], errs[d] = m.run(ctx, c.params[i], d)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		m.n.log.Error("challenge computation failed", "err", err)
		s.close()
		return
	}
	roots := make([][]byte, len(s.roots))
	for i := range s.roots {
		roots[i] = s.roots[i][:]
	}
	s.expires = time.Now().Add(m.n.cfg.Miner.ProofWindow.Duration)
	m.mu.Lock()
	m.served[c.id] = s
	m.mu.Unlock()
	ms := time.Since(start).Milliseconds()
	if _, err := m.n.publish(ctx, protocol.TopicCommitment, &pb.Commitment{Version: protocol.Version, ChallengeId: c.id[:], Roots: roots, ComputeMs: uint64(ms)}); err != nil {
		m.n.log.Error("publishing commitment failed", "err", err)
		return
	}
	m.n.log.Info("committed", "validator", c.validator, "round", c.msg.Round, "subs", len(roots), "compute_ms", ms)
}

func (m *miner) run(ctx context.Context, p proof.Params, device int) (kernels.Job, []commit.CV, commit.CV, error) {
	job, err := m.backend.Start(p, kernels.Options{Workers: m.n.cfg.Miner.Workers, Device: device})
	if err != nil {
		return nil, nil, commit.CV{}, err
	}
	leaves, err := kernels.Compute(ctx, job)
	var root commit.CV
	if err == nil {
		root, err = commit.Root(leaves)
	}
	if err != nil {
		job.Close()
		return nil, nil, commit.CV{}, err
	}
	return job, leaves, root, nil
}

func (s *served) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j != nil {
			j.Close()
		}
	}
	s.jobs = nil
}

// janitor frees outputs whose proof window has closed.
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
					s.close()
					delete(m.served, id)
				}
			}
			m.mu.Unlock()
		}
	}
}

// handleStream serves one tile request: the requester must be the
// challenge's validator and its indices must follow from the revealed secret.
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
		if b, err := protocol.Seal(m.n.key, &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:], Sub: req.Sub, Error: reason}); err == nil {
			protocol.WriteFrame(st, b)
		}
		st.Close()
	}
	if s == nil {
		fail("unknown challenge or proof window closed")
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.jobs == nil:
		fail("proof window closed")
		return
	case o.Author != s.c.validator:
		fail("only the challenge's validator may request tiles")
		return
	case int(req.Sub) >= len(s.jobs):
		fail("no such sub-challenge")
		return
	}
	tr := proof.Transcript{Params: s.c.params[req.Sub], SecretCommitment: [32]byte(s.c.msg.SecretCommitment),
		Root: s.roots[req.Sub], Secret: [32]byte(req.Secret), Samples: int(s.c.msg.Samples)}
	idx, err := tr.Indices()
	if err != nil {
		fail(err.Error())
		return
	}
	if !slices.Equal(idx, req.Indices) {
		fail("requested indices do not follow from the secret and root")
		return
	}
	tileBytes := tr.Params.TileBytes()
	if err := st.Scope().ReserveMemory(tileBytes, network.ReservationPriorityMedium); err != nil {
		fail("busy: proof stream memory budget exhausted")
		return
	}
	defer st.Scope().ReleaseMemory(tileBytes)
	pr, err := commit.Prove(s.leaves[req.Sub], idx)
	if err != nil {
		fail(err.Error())
		return
	}
	prb, _ := pr.MarshalBinary()
	head, err := protocol.Seal(m.n.key, &pb.TileResponse{Version: protocol.Version, ChallengeId: id[:], Sub: req.Sub, Proof: prb})
	if err != nil {
		fail(err.Error())
		return
	}
	w := bufio.NewWriter(st)
	err = protocol.WriteFrame(w, head)
	tile := make([]byte, tileBytes)
	for _, x := range idx {
		if err != nil {
			break
		}
		if err = s.jobs[req.Sub].Tile(x, tile); err == nil {
			err = protocol.WriteFrame(w, tile)
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		st.Reset()
		return
	}
	st.Close()
}
