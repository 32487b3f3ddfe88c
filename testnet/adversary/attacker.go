package adversary

import (
	"context"
	"io"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pubsubpb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

// Attacker is a bare libp2p+GossipSub peer that ignores pog's rules: the
// spammer floods malformed and oversized gossip, the identity forger
// publishes messages under other identities.
type Attacker struct {
	Host   host.Host
	topics map[string]*pubsub.Topic
	rnd    io.Reader // its keys and junk: a seeded stream, so a run replays
}

// NewAttacker starts an attacker on transport with an identity drawn from
// rnd, which also gives its forged keys and junk.
func NewAttacker(ctx context.Context, transport []libp2p.Option, rnd io.Reader) (*Attacker, error) {
	key, _, err := crypto.GenerateEd25519Key(rnd)
	if err != nil {
		return nil, err
	}
	h, err := libp2p.New(append(transport, libp2p.Identity(key))...)
	if err != nil {
		return nil, err
	}
	ps, err := pubsub.NewGossipSub(ctx, h, pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithMessageIdFn(func(m *pubsubpb.Message) string { return protocol.GossipID(m.Data) }))
	if err != nil {
		h.Close()
		return nil, err
	}
	a := &Attacker{Host: h, topics: map[string]*pubsub.Topic{}, rnd: rnd}
	for _, name := range []string{protocol.TopicAnnounce, protocol.TopicChallenge, protocol.TopicCommitment, protocol.TopicReveal, protocol.TopicEpoch} {
		t, err := ps.Join(name)
		if err != nil {
			h.Close()
			return nil, err
		}
		if _, err := t.Subscribe(); err != nil {
			h.Close()
			return nil, err
		}
		a.topics[name] = t
	}
	return a, nil
}

// Spam publishes garbage and oversized messages every period until ctx ends.
func (a *Attacker) Spam(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for i := 0; ; i++ {
		junk := make([]byte, 64+i%64)
		io.ReadFull(a.rnd, junk)
		a.topics[protocol.TopicChallenge].Publish(ctx, junk)
		a.topics[protocol.TopicAnnounce].Publish(ctx, make([]byte, protocol.MaxGossipBytes+1+i))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Forge publishes, every period, an announce that claims victim's identity
// (its public key, the forger's signature) and a commitment for a challenge
// addressed to another miner.
func (a *Attacker) Forge(ctx context.Context, victim crypto.PubKey, period time.Duration) {
	key, _, _ := crypto.GenerateEd25519Key(a.rnd)
	vpub, _ := crypto.MarshalPublicKey(victim)
	t := time.NewTicker(period)
	defer t.Stop()
	for seq := uint64(1); ; seq++ {
		if raw, err := protocol.Seal(key, &pb.MinerAnnounce{Version: 1, Seq: seq, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}); err == nil {
			var env pb.Envelope
			if proto.Unmarshal(raw, &env) == nil {
				env.PublicKey = vpub // "I am the victim"
				if forged, err := proto.Marshal(&env); err == nil {
					a.topics[protocol.TopicAnnounce].Publish(ctx, forged)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Attacker) Connect(ctx context.Context, to host.Host) error {
	return a.Host.Connect(ctx, peer.AddrInfo{ID: to.ID(), Addrs: to.Addrs()})
}
