package node

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// validator challenges every announced miner each round, times the
// commitment on its own clock, fetches and verifies the sampled tiles and
// stores the evidence.
type validator struct {
	n        *Node
	store    *store.Store
	onRecord func(*store.RoundRecord)

	mu       sync.Mutex
	miners   map[peer.ID]*minerEntry
	waiting  map[[32]byte]chan gossipVal
	round    uint64
	wg       sync.WaitGroup
	inflight map[uint64]*sync.WaitGroup // rounds in flight per epoch
	scorer   *EpochScorer
}

type minerEntry struct {
	ann  *pb.MinerAnnounce
	seen time.Time
	busy bool
}

func newValidator(n *Node, st *store.Store, onRecord func(*store.RoundRecord)) *validator {
	return &validator{n: n, store: st, onRecord: onRecord, miners: map[peer.ID]*minerEntry{}, waiting: map[[32]byte]chan gossipVal{},
		inflight: map[uint64]*sync.WaitGroup{},
		scorer:   &EpochScorer{Store: st, Validator: n.ID(), Config: n.scoring}}
}

func (v *validator) onAnnounce(g gossipVal) {
	// The first announce of each epoch is the hardware evidence scoring uses.
	if _, err := v.store.PutAnnounce(v.n.view.epochAt(g.at), []byte(g.opened.Author), g.opened.Raw); err != nil {
		v.n.log.Error("storing announce failed", "miner", g.opened.Author, "err", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.miners[g.opened.Author]
	if e == nil {
		e = &minerEntry{}
		v.miners[g.opened.Author] = e
		v.n.log.Info("miner joined", "miner", g.opened.Author)
	}
	e.ann, e.seen = g.opened.Msg.(*pb.MinerAnnounce), g.at
}

func (v *validator) onCommitment(g gossipVal) {
	id := [32]byte(g.opened.Msg.(*pb.Commitment).ChallengeId)
	v.mu.Lock()
	ch := v.waiting[id]
	v.mu.Unlock()
	if ch != nil {
		select {
		case ch <- g:
		default:
		}
	}
}

func (v *validator) start(ctx context.Context) {
	v.n.wg.Add(2)
	go v.epochLoop(ctx)
	go func() {
		defer v.n.wg.Done()
		// The offset staggers validators so their challenges do not queue
		// behind each other at a miner and dilute its measured throughput.
		select {
		case <-ctx.Done():
			return
		case <-time.After(v.n.cfg.Validator.RoundOffset.Duration):
		}
		t := time.NewTicker(v.n.cfg.Validator.RoundInterval.Duration)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				v.wg.Wait()
				return
			case <-t.C:
				v.startRound(ctx)
			}
		}
	}()
}

// startRound challenges every miner announced within the TTL that has no
// round in flight.
func (v *validator) startRound(ctx context.Context) {
	now := time.Now()
	epoch := v.n.view.epochAt(now)
	v.mu.Lock()
	v.round++
	round := v.round
	var picked []peer.ID
	for p, e := range v.miners {
		switch {
		case now.Sub(e.seen) > v.n.cfg.Validator.MinerTTL.Duration:
			delete(v.miners, p)
			v.n.log.Info("miner left (no announce)", "miner", p)
		case v.n.host.Network().Connectedness(p) != network.Connected:
			// Announced through a relay: tiles are fetched over a direct
			// stream, so wait until this node is connected to the miner.
		case !e.busy:
			e.busy = true
			picked = append(picked, p)
		}
	}
	anns := make([]*pb.MinerAnnounce, len(picked))
	for i, p := range picked {
		anns[i] = v.miners[p].ann
	}
	wg := v.inflight[epoch]
	if wg == nil {
		wg = &sync.WaitGroup{}
		v.inflight[epoch] = wg
	}
	wg.Add(len(picked))
	v.mu.Unlock()
	for i, p := range picked {
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			defer wg.Done()
			rec := v.runRound(ctx, epoch, round, p, anns[i])
			if ctx.Err() != nil {
				// Interrupted by this node's own shutdown: no evidence about
				// the miner either way.
				v.mu.Lock()
				if e := v.miners[p]; e != nil {
					e.busy = false
				}
				v.mu.Unlock()
				return
			}
			if err := v.store.PutRound(rec); err != nil {
				v.n.log.Error("storing round evidence failed", "miner", p, "err", err)
			} else if v.onRecord != nil {
				v.onRecord(rec)
			}
			v.mu.Lock()
			if e := v.miners[p]; e != nil {
				e.busy = false
			}
			v.mu.Unlock()
		}()
	}
}

// runRound plays one round against one miner and returns its evidence.
func (v *validator) runRound(ctx context.Context, epoch, round uint64, miner peer.ID, ann *pb.MinerAnnounce) *store.RoundRecord {
	cfg := v.n.cfg.Validator
	rec := &store.RoundRecord{Epoch: epoch, Round: round, Miner: []byte(miner), Validator: []byte(v.n.ID()), Verdict: store.VerdictFailed}
	failed := func(format string, args ...any) *store.RoundRecord {
		rec.Reason = fmt.Sprintf(format, args...)
		if len(rec.Leaves) != len(rec.Indices) {
			rec.Leaves, rec.Proofs = nil, nil // evidence of a partial fetch is not auditable
		}
		v.n.log.Warn("round failed", "miner", miner, "epoch", epoch, "round", round, "reason", rec.Reason)
		return rec
	}
	plan, err := planChallenge(cfg, miner, ann, rand.Reader)
	if err != nil {
		return failed("cannot size a challenge: %v", err)
	}
	rec.Secret = plan.secret
	msg := &pb.Challenge{Version: protocol.Version, Epoch: epoch, Round: round, Miner: []byte(miner),
		SecretCommitment: commitSecret(plan.secret), Samples: uint32(plan.samples), DeadlineMs: uint32(cfg.Deadline.Milliseconds())}
	for _, p := range plan.params {
		b, _ := p.MarshalBinary()
		msg.Params = append(msg.Params, b)
		rec.FLOPs += p.FLOPs()
	}
	raw, err := protocol.Seal(v.n.key, msg)
	if err != nil {
		return failed("sealing challenge: %v", err)
	}
	o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
	if err != nil {
		return failed("own challenge invalid: %v", err)
	}
	id := protocol.ID(o.Body)
	ch := make(chan gossipVal, 1)
	v.mu.Lock()
	v.waiting[id] = ch
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		delete(v.waiting, id)
		v.mu.Unlock()
	}()
	rec.Challenge = raw
	sent := time.Now()
	rec.SentUnixNano = sent.UnixNano()
	if err := v.n.topics[protocol.TopicChallenge].Publish(ctx, raw); err != nil {
		return failed("publishing challenge: %v", err)
	}
	var g gossipVal
	timer := time.NewTimer(cfg.Deadline.Duration)
	defer timer.Stop()
	select {
	case g = <-ch:
	case <-timer.C:
		return failed("no commitment within %v", cfg.Deadline.Duration)
	case <-ctx.Done():
		return failed("validator shut down mid-round")
	}
	// Timed on this node's monotonic clock, send to receipt: the miner's
	// own timing is never used.
	rec.CommitNanos = g.at.Sub(sent).Nanoseconds()
	rec.Commitment = g.opened.Raw
	roots := g.opened.Msg.(*pb.Commitment).Roots
	if _, err := v.n.publish(ctx, protocol.TopicReveal, &pb.Reveal{Version: protocol.Version, ChallengeId: id[:], Secret: plan.secret[:]}); err != nil {
		return failed("publishing reveal: %v", err)
	}
	start := time.Now()
	others := v.n.view.otherRoots(miner)
	for sub, p := range plan.params {
		tr := proof.Transcript{Params: p, SecretCommitment: [32]byte(msg.SecretCommitment), Root: [32]byte(roots[sub]),
			Secret: plan.secret, Samples: plan.samples}
		idx, err := tr.Indices()
		if err != nil {
			return failed("sub-challenge %d: %v", sub, err)
		}
		rec.Indices = append(rec.Indices, idx...)
		fctx, cancel := context.WithTimeout(ctx, cfg.ProofTimeout.Duration)
		tiles, pr, err := fetchTiles(fctx, v.n.host, v.n.key, miner, id, uint32(sub), plan.secret, idx, p.TileBytes())
		cancel()
		if err != nil {
			return failed("sub-challenge %d: tile request failed: %v", sub, err)
		}
		res := tr.Check(tiles, pr, others)
		// Keep the proof and the tiles' leaves so an audit can re-verify
		// inclusion without the tiles.
		if prb, err := pr.MarshalBinary(); err == nil && sizesOK(tiles, p.TileBytes()) {
			rec.Proofs = append(rec.Proofs, prb)
			for i, t := range tiles {
				rec.Leaves = append(rec.Leaves, [32]byte(commit.TileCV(t, idx[i])))
			}
		}
		for i, x := range idx {
			tv := store.TileVerdict{Index: x, OK: res.Err == nil}
			if res.Tiles != nil {
				tv.OK = res.Tiles[i] == nil
				if !tv.OK {
					tv.Reason = res.Tiles[i].Error()
				}
			}
			rec.Tiles = append(rec.Tiles, tv)
		}
		if res.Err != nil {
			rec.VerifyNanos = time.Since(start).Nanoseconds()
			return failed("sub-challenge %d: %v", sub, res.Err)
		}
	}
	rec.VerifyNanos = time.Since(start).Nanoseconds()
	rec.Verdict = store.VerdictVerified
	rec.TFLOPS = rec.FLOPs / (float64(rec.CommitNanos) / 1e9) / 1e12
	v.n.log.Info("round verified", "miner", miner, "epoch", epoch, "round", round,
		"tflops", fmt.Sprintf("%.4f", rec.TFLOPS), "commit_ms", rec.CommitNanos/1e6, "verify_ms", rec.VerifyNanos/1e6)
	return rec
}

func commitSecret(s [32]byte) []byte {
	c := sample.Commit(s)
	return c[:]
}

// epochLoop closes each epoch once its rounds are over: it scores the
// validator's evidence, stores the signed record and gossips it.
func (v *validator) epochLoop(ctx context.Context) {
	defer v.n.wg.Done()
	length := v.n.cfg.Network.EpochLength.Duration
	for {
		e := v.n.view.epochAt(time.Now())
		end := time.Unix(0, int64(e+1)*int64(length))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(end)):
		}
		v.mu.Lock()
		wg := v.inflight[e]
		delete(v.inflight, e)
		v.mu.Unlock()
		if wg != nil {
			wg.Wait() // rounds that started in e belong to e
		}
		if err := v.closeEpoch(ctx, e); err != nil && ctx.Err() == nil {
			v.n.log.Error("closing epoch failed", "epoch", e, "err", err)
		}
	}
}

func (v *validator) closeEpoch(ctx context.Context, e uint64) error {
	defer v.n.obs.epochClosed(time.Now())
	rec, scores, err := v.scorer.Close(e)
	if err != nil {
		return err
	}
	if v.n.alterRec != nil {
		v.n.alterRec(rec)
	}
	raw, err := protocol.Seal(v.n.key, rec)
	if err != nil {
		return err
	}
	if err := v.store.PutEpochRecord(e, []byte(v.n.ID()), raw); err != nil {
		return err
	}
	if err := v.n.topics[protocol.TopicEpoch].Publish(ctx, raw); err != nil {
		return err
	}
	v.n.log.Info("epoch closed", "epoch", e, "miners", len(scores), "weights", len(rec.Weights))
	return nil
}

func sizesOK(tiles [][]byte, size int) bool {
	for _, t := range tiles {
		if len(t) != size {
			return false
		}
	}
	return true
}
