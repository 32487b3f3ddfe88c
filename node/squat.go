package node

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
)

// squat is the testnet squatter's attack (Options.Squat): a listed
// validator challenges each victim off schedule, over and over, with a host
// round due when its plan says (the latest a miner accepts) whose secret it
// never reveals (holding the miner's host lock), and with a GPU round sized
// and due as late as the miner accepts (plan.Admissible) whose beacons it
// never sends (holding a queue place).
func (n *Node) squat(ctx context.Context, victims func() []peer.ID) {
	started := map[peer.ID]bool{}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		for _, p := range victims() {
			if !started[p] {
				started[p] = true
				go n.squatLoop(ctx, p, n.squatHost)
				go n.squatLoop(ctx, p, n.squatRound)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// squatLoop runs one of the squatter's rounds with p again as soon as the
// last one ends, at most once a second (the challenge rate).
func (n *Node) squatLoop(ctx context.Context, p peer.ID, play func(context.Context, peer.ID) error) {
	for {
		next := time.Now().Add(challengeEvery)
		if err := play(ctx, p); err != nil {
			n.log.Debug("squat", "miner", p, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
	}
}

// squatHost opens a CPU host round with p and holds it until p ends it.
func (n *Node) squatHost(ctx context.Context, p peer.ID) error {
	pl, err := plan.Host(n.cfg, hostround.KindCPU, p, &pb.MinerAnnounce{}, memwalk.Epoch{}, 0, 0, rand.Reader)
	if err != nil {
		return err
	}
	return n.squatStream(ctx, p, hostround.Protocol, func(w *bufio.Writer) error { return stream.WriteFlush(w, pl.Challenge.Encode()) })
}

// squatRound opens a GPU round of a probe's work with p, sized to last the
// longest a plan gives and due at its latest deadline, and holds it until p
// ends it; the challenge is gossiped too, as a validator's is.
func (n *Node) squatRound(ctx context.Context, p peer.ID) error {
	ann := n.validator.Announce(p)
	if ann == nil {
		return nil // not announced yet
	}
	pl, err := plan.Challenge(n.cfg.Validator, p, ann, 0, proof.FP16, 0, 0, 0, rand.Reader)
	if err != nil {
		return err
	}
	cfg := n.cfg.Validator
	long := plan.LongestRound(cfg, ann, len(pl.Params), plan.MaxRTT(cfg, ann))
	minTimed := (long * time.Duration(pl.Steps-1) / time.Duration(pl.Steps)).Truncate(time.Millisecond)
	deadline := uint32(plan.LatestDeadline(cfg, ann, pl.Steps, minTimed).Milliseconds())
	sc := sample.Commit(pl.Secret)
	msg := &pb.Challenge{Version: protocol.Version, Epoch: n.view.epochAt(time.Now()), Round: uint64(time.Now().UnixNano()), Miner: []byte(p),
		SecretCommitment: sc[:], Samples: uint32(pl.Samples), Steps: uint32(pl.Steps),
		DeadlineMs: deadline, FirstRootMs: deadline, MinTimedMs: uint32(minTimed.Milliseconds())}
	for _, pp := range pl.Params {
		b, _ := pp.MarshalBinary()
		msg.Params = append(msg.Params, b)
	}
	raw, err := n.publish(ctx, protocol.TopicChallenge, msg)
	if raw == nil {
		return err
	}
	return n.squatStream(ctx, p, protocol.RoundProtocol, func(w *bufio.Writer) error {
		return protocol.WriteRoundFrame(w, &pb.RoundFrame{Msg: &pb.RoundFrame_Challenge{Challenge: raw}})
	})
}

// squatStream writes the opening frame on a new stream to p, then reads
// and discards what p sends until p ends the stream.
func (n *Node) squatStream(ctx context.Context, p peer.ID, proto libp2pprotocol.ID, open func(*bufio.Writer) error) error {
	s, err := n.host.NewStream(ctx, p, proto)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	defer s.Reset()
	if err := open(bufio.NewWriter(s)); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, s)
	return err
}
