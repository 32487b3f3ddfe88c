package validator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// vdriver wires a round.Validator to the round stream, gossip and the
// proof stream.
type vdriver struct {
	v      *Validator
	ctx    context.Context
	rec    *store.RoundRecord
	rs     *stream.Round
	m      *round.Validator
	miner  peer.ID
	id     [32]byte
	chain  proof.Chain
	origin time.Time

	commitment  []byte
	commitNanos int64
	verify      time.Duration
	// lastRoot is the latest step root's arrival, step the time between
	// the last two: a tile fetch waits a miner's recomputing of tiles.
	lastRoot time.Time
	step     time.Duration
}

func (d *vdriver) at(t time.Time) time.Duration { return t.Sub(d.origin) }

// run feeds events to the machine until it finishes.
func (d *vdriver) run(first any) round.Outcome {
	done := make(chan struct{})
	defer close(done)
	frames := stream.ReadFrames(bufio.NewReader(d.rs.S), done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	pending := []any{first}
	for {
		for len(pending) > 0 {
			ev := pending[0]
			pending = pending[1:]
			t0 := time.Now()
			tiles, checking := ev.(round.Tiles)
			if checking && tiles.Err == nil && d.v.env.CheckCPU != nil {
				d.v.env.CheckCPU(d.ctx, d.miner, CheckTiles, len(tiles.Tiles))
			}
			acts := d.m.Step(ev)
			if checking {
				d.verify = time.Since(t0)
			}
			for _, a := range acts {
				switch a := a.(type) {
				case round.Finish:
					return a.Outcome
				case round.SetTimer:
					timer.Reset(time.Until(d.origin.Add(a.At)))
				case round.SendBeacon:
					err := d.rs.Send(&pb.RoundFrame{Msg: &pb.RoundFrame_Beacon{Beacon: &pb.Beacon{Step: uint32(a.Step), Beacon: a.Beacon[:]}}})
					if err != nil {
						pending = append(pending, round.Closed{At: d.at(time.Now()), Err: err})
					}
				case round.Reveal:
					_, err := d.v.env.Publish(d.ctx, protocol.TopicReveal, &pb.Reveal{Version: protocol.Version, ChallengeId: d.id[:], Secret: d.rec.Secret[:]})
					if err != nil {
						pending = append(pending, round.Abandon{Reason: "publishing reveal: " + err.Error()})
					}
				case round.Fetch:
					pending = append(pending, d.fetch(a))
				}
			}
		}
		select {
		case fr := <-frames:
			pending = append(pending, d.event(fr))
		case now := <-timer.C:
			pending = append(pending, round.Timer{At: d.at(now)})
		case <-d.ctx.Done():
			reason := "validator shut down mid-round"
			if errors.Is(context.Cause(d.ctx), errRoundCutoff) {
				reason = errRoundCutoff.Error()
			}
			pending = append(pending, round.Abandon{Reason: reason})
		}
	}
}

// event turns a frame from the miner into a machine event.
func (d *vdriver) event(fr stream.Arrival) any {
	at := d.at(fr.At)
	if fr.Err != nil {
		return round.Closed{At: at, Err: fr.Err}
	}
	switch m := fr.F.Msg.(type) {
	case *pb.RoundFrame_Root:
		roots := make([]commit.CV, len(m.Root.Roots))
		for i, r := range m.Root.Roots {
			roots[i] = commit.CV(r)
		}
		if !d.lastRoot.IsZero() {
			d.step = fr.At.Sub(d.lastRoot)
		}
		d.lastRoot = fr.At
		if int(m.Root.Step) == d.chain.Steps-1 {
			d.v.setPhase(d.miner, roundTail, fr.At.Add(d.rtt()*2+heldFetch)) // the commitment follows at once
		}
		return round.Root{At: at, Step: int(m.Root.Step), Roots: roots}
	case *pb.RoundFrame_Commitment:
		o, err := protocol.Open(m.Commitment, pb.MessageType_COMMITMENT)
		if err != nil {
			return round.Abandon{Reason: "commitment: " + err.Error()}
		}
		cm := o.Msg.(*pb.Commitment)
		switch {
		case o.Author != d.miner:
			return round.Abandon{Reason: fmt.Sprintf("commitment signed by %s, not the miner", o.Author)}
		case [32]byte(cm.ChallengeId) != d.id:
			return round.Abandon{Reason: "commitment answers another challenge"}
		case len(cm.Roots) != d.chain.Steps*d.chain.Subs():
			return round.Abandon{Reason: fmt.Sprintf("commitment has %d roots for %d steps of %d", len(cm.Roots), d.chain.Steps, d.chain.Subs())}
		}
		d.commitment, d.commitNanos = m.Commitment, at.Nanoseconds()
		d.v.setHeld(d.miner, time.Time{}) // in: the reveal is this validator's
		return round.Committed{At: at, Roots: audit.Reshape(cm.Roots, d.chain.Subs())}
	}
	return round.Abandon{Reason: fmt.Sprintf("unexpected %T frame from the miner", fr.F.Msg)}
}

// rtt is the round's round trip.
func (d *vdriver) rtt() time.Duration { return time.Duration(d.rec.RTTNanos) }

func (d *vdriver) fetch(a round.Fetch) round.Tiles {
	// The proof stream opens (its protocol negotiated, two round trips
	// the first time), the miner recomputes the tiles and sends them.
	d.v.setHeld(d.miner, time.Now().Add(d.rtt()*4+2*heldFetch+2*d.step))
	defer d.v.setHeld(d.miner, time.Time{}) // then the check is this validator's
	cfg := d.v.env.Config.Validator
	fctx, cancel := context.WithTimeout(d.ctx, cfg.ProofTimeout.Duration)
	defer cancel()
	tiles, proofs, err := fetchTiles(fctx, d.v.env.Host, d.v.env.Key, d.miner, d.id, d.rec.Secret, a.Indices,
		d.chain.Template[0].TileBytes(), len(a.Groups))
	return round.Tiles{Tiles: tiles, Proofs: proofs, Err: err, Unanswered: err != nil && !isBadAnswer(err)}
}

// badAnswer is a tile response that arrived wrong (unsigned by the miner,
// a refusal, malformed, oversized). Every other fetchTiles error is no
// answer: the miner was unreachable, or the stream reset or timed out.
type badAnswer struct{ error }

func isBadAnswer(err error) bool {
	var b badAnswer
	return errors.As(err, &b)
}

// readAnswerFrame reads one frame of a tile response; an oversized or
// malformed one is a bad answer, a failed read none.
func readAnswerFrame(r *bufio.Reader, max int, what string) ([]byte, error) {
	b, err := protocol.ReadFrame(r, max)
	if errors.Is(err, protocol.ErrTooLarge) {
		return nil, badAnswer{fmt.Errorf("%s: %v", what, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// fetchTiles asks miner for a round's sampled tiles over the proof stream.
// Every read is bounded: the response header by its envelope limit, each
// tile frame by the tile size.
func fetchTiles(ctx context.Context, h host.Host, key crypto.PrivKey, miner peer.ID, id [32]byte,
	secret [32]byte, idx []uint64, tileBytes, groups int) ([][]byte, []commit.Proof, error) {
	s, err := h.NewStream(ctx, miner, protocol.ProofProtocol)
	if err != nil {
		return nil, nil, fmt.Errorf("open proof stream: %w", err)
	}
	ok := false
	defer func() {
		if ok {
			s.Close()
		} else {
			s.Reset()
		}
	}()
	if d, has := ctx.Deadline(); has {
		s.SetDeadline(d)
	}
	need := len(idx) * tileBytes
	if err := s.Scope().ReserveMemory(need, network.ReservationPriorityHigh); err != nil {
		return nil, nil, fmt.Errorf("proof stream memory budget: %w", err)
	}
	defer s.Scope().ReleaseMemory(need)
	req, err := protocol.Seal(key, &pb.TileRequest{Version: protocol.Version, ChallengeId: id[:], Secret: secret[:], Indices: idx})
	if err != nil {
		return nil, nil, err
	}
	if err := protocol.WriteFrame(s, req); err != nil {
		return nil, nil, fmt.Errorf("send tile request: %w", err)
	}
	s.CloseWrite()
	r := bufio.NewReader(s)
	raw, err := readAnswerFrame(r, protocol.MaxEnvelope(pb.MessageType_TILE_RESPONSE), "tile response")
	if err != nil {
		return nil, nil, err
	}
	o, err := protocol.Open(raw, pb.MessageType_TILE_RESPONSE)
	if err != nil {
		return nil, nil, badAnswer{fmt.Errorf("tile response: %v", err)}
	}
	resp := o.Msg.(*pb.TileResponse)
	switch {
	case o.Author != miner:
		return nil, nil, badAnswer{fmt.Errorf("tile response signed by %s, not the miner", o.Author)}
	case resp.Error != "":
		return nil, nil, badAnswer{fmt.Errorf("miner could not serve tiles: %s", resp.Error)}
	case [32]byte(resp.ChallengeId) != id:
		return nil, nil, badAnswer{errors.New("tile response for another challenge")}
	case len(resp.Proofs) != groups:
		return nil, nil, badAnswer{fmt.Errorf("tile response has %d proofs for %d groups", len(resp.Proofs), groups)}
	}
	proofs := make([]commit.Proof, len(resp.Proofs))
	for i, b := range resp.Proofs {
		if proofs[i], err = commit.DecodeProof(b); err != nil {
			return nil, nil, badAnswer{fmt.Errorf("proof %d: %v", i, err)}
		}
	}
	tiles := make([][]byte, len(idx))
	for i := range tiles {
		if tiles[i], err = readAnswerFrame(r, tileBytes, fmt.Sprintf("tile %d of %d", i+1, len(idx))); err != nil {
			return nil, nil, err
		}
	}
	ok = true
	return tiles, proofs, nil
}
