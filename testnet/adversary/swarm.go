package adversary

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pubsubpb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// The swarm is SwarmIdentities identities that announce and never
// compute: each announce is valid and signed by its own key, so every
// validator would owe each a no-show record per owned slot, and an epoch
// record a weight each (SPEC.md §16 admission bounds both). The keys are
// spread over hosts of at most SwarmKeysPerHost, the new-key budget of one
// connection (SPEC.md §15), so all of them are in at once: the budget
// alone would let one connection's 5,000 keys in over about 20 minutes.
const (
	SwarmIdentities  = 5000
	SwarmKeysPerHost = 256
)

// Swarm is the swarm's hosts and keys.
type Swarm struct {
	hosts []*swarmHost
}

type swarmHost struct {
	h     host.Host
	topic *pubsub.Topic
	keys  []crypto.PrivKey
	ids   []peer.ID
}

// NewSwarm makes n identities from seed (the same seed, the same peer
// IDs), on hosts that transport(i) puts on the network.
func NewSwarm(ctx context.Context, n int, seed uint64, transport func(i int) []libp2p.Option) (*Swarm, error) {
	rnd := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), 's', 'w'})
	s := &Swarm{}
	for i := 0; i < n; i += SwarmKeysPerHost {
		h, err := libp2p.New(transport(len(s.hosts))...)
		if err != nil {
			s.Close()
			return nil, err
		}
		sh := &swarmHost{h: h}
		s.hosts = append(s.hosts, sh)
		ps, err := pubsub.NewGossipSub(ctx, h, pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
			pubsub.WithMessageIdFn(func(m *pubsubpb.Message) string { return protocol.GossipID(m.Data) }))
		if err != nil {
			s.Close()
			return nil, err
		}
		if sh.topic, err = ps.Join(protocol.TopicAnnounce); err != nil {
			s.Close()
			return nil, err
		}
		for range min(SwarmKeysPerHost, n-i) {
			k, _, err := crypto.GenerateEd25519Key(rnd)
			if err != nil {
				s.Close()
				return nil, err
			}
			id, _ := peer.IDFromPrivateKey(k)
			sh.keys, sh.ids = append(sh.keys, k), append(sh.ids, id)
		}
	}
	return s, nil
}

// IDs are the swarm's identities.
func (s *Swarm) IDs() []peer.ID {
	var out []peer.ID
	for _, h := range s.hosts {
		out = append(out, h.ids...)
	}
	return out
}

// Hosts are the swarm's hosts.
func (s *Swarm) Hosts() []host.Host {
	var out []host.Host
	for _, h := range s.hosts {
		out = append(out, h.h)
	}
	return out
}

// Close closes every host.
func (s *Swarm) Close() {
	for _, h := range s.hosts {
		h.h.Close()
	}
}

// swarmPace spaces one host's announces: a burst beyond a receiver's
// validation queue would be dropped, not refused.
const swarmPace = 20 * time.Millisecond

// Announce publishes every identity's announce (an H100 miner's) now and
// at the start of every epoch of length epoch until ctx ends, each host
// its own keys in turn: under a slot schedule a validator keeps a miner
// scheduled for the rest of the epoch of its last announce (SPEC.md §18),
// so one announce an epoch is enough.
func (s *Swarm) Announce(ctx context.Context, epoch time.Duration) {
	done := make(chan struct{})
	for _, sh := range s.hosts {
		go func() {
			defer func() { done <- struct{}{} }()
			sh.announce(ctx, epoch)
		}()
	}
	for range s.hosts {
		<-done
	}
}

func (sh *swarmHost) announce(ctx context.Context, epoch time.Duration) {
	for seq := uint64(1); ; seq++ {
		for i, k := range sh.keys {
			ann := &pb.MinerAnnounce{Version: protocol.Version, Seq: seq, Precisions: []uint32{1, 2}, MaxOutputBytes: 1 << 30,
				Gpus: []*pb.GPU{{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30}}}
			if raw, err := protocol.Seal(k, ann); err == nil {
				sh.topic.Publish(ctx, raw, pubsub.WithSecretKeyAndPeerId(k, sh.ids[i]))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(swarmPace):
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(epoch - time.Duration(time.Now().UnixNano()%int64(epoch))):
		}
	}
}
