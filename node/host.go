package node

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pubsubpb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	dutil "github.com/libp2p/go-libp2p/p2p/discovery/util"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/protocol/identify"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// newHost builds the libp2p host: TCP and QUIC on the configured addresses,
// a connection manager, and resource-manager limits with a memory budget for
// proof streams.
//
// Port reuse is off (libp2p enables SO_REUSEPORT by default), so an address
// another process holds cannot be bound twice; and every configured address
// must be bound, where libp2p alone gives up only if all of them fail.
// transport, if not empty, replaces the TCP and QUIC transports (Options.Transport).
func newHost(key crypto.PrivKey, cfg config.NodeConfig, transport ...libp2p.Option) (host.Host, error) {
	cm, err := connmgr.NewConnManager(cfg.LowWater, cfg.HighWater, connmgr.WithGracePeriod(time.Minute))
	if err != nil {
		return nil, err
	}
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	// Tile responses are the only large payloads: bound them per protocol
	// and per peer so a flood of proof streams cannot exhaust memory.
	limits.AddProtocolLimit(protocol.ProofProtocol, rcmgr.BaseLimit{
		Streams: 256, StreamsInbound: 128, StreamsOutbound: 128, Memory: cfg.ProofStreamMemory,
	}, rcmgr.BaseLimitIncrease{})
	limits.AddProtocolPeerLimit(protocol.ProofProtocol, rcmgr.BaseLimit{
		Streams: 32, StreamsInbound: 16, StreamsOutbound: 16, Memory: cfg.ProofStreamMemory / 4,
	}, rcmgr.BaseLimitIncrease{})
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(fitLimits(limits.AutoScale(), cfg.HighWater)))
	if err != nil {
		return nil, err
	}
	if len(transport) == 0 {
		transport = []libp2p.Option{
			libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
			libp2p.Transport(libp2pquic.NewTransport),
			libp2p.QUICReuse(quicreuse.NewConnManager, quicreuse.DisableReuseport()),
		}
	}
	h, err := libp2p.New(append(transport,
		libp2p.Identity(key),
		libp2p.NoListenAddrs,
		libp2p.ConnectionManager(cm),
		libp2p.ResourceManager(rm),
	)...)
	if err != nil {
		return nil, err
	}
	for _, s := range cfg.Listen {
		a, err := ma.NewMultiaddr(s)
		if err == nil {
			err = h.Network().Listen(a)
		}
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("cannot listen on %s (node.listen): %w", s, err)
		}
	}
	return h, nil
}

// Peer-score parameters, after Lotus (Filecoin) and Prysm (Ethereum): one
// invalid message costs 1000 points, far below the gossip threshold, and
// decays over an hour; first deliveries earn a little. SPEC.md §16 lists them.
const (
	GossipThreshold    = -500
	PublishThreshold   = -1000
	GraylistThreshold  = -2500
	invalidMsgWeight   = -1000
	firstDeliveryScore = 0.5
)

// peerScoreParams scores peers; app is the application-specific score
// (excess challenges, SPEC §15).
func peerScoreParams(app func(peer.ID) float64) (*pubsub.PeerScoreParams, *pubsub.PeerScoreThresholds) {
	topics := map[string]*pubsub.TopicScoreParams{}
	for t := range topicType {
		topics[t] = &pubsub.TopicScoreParams{
			TopicWeight:                    1,
			TimeInMeshWeight:               0.0027,
			TimeInMeshQuantum:              time.Second,
			TimeInMeshCap:                  3600,
			FirstMessageDeliveriesWeight:   firstDeliveryScore,
			FirstMessageDeliveriesDecay:    pubsub.ScoreParameterDecay(10 * time.Minute),
			FirstMessageDeliveriesCap:      100,
			InvalidMessageDeliveriesWeight: invalidMsgWeight,
			InvalidMessageDeliveriesDecay:  pubsub.ScoreParameterDecay(time.Hour),
		}
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	return &pubsub.PeerScoreParams{
			Topics:                      topics,
			AppSpecificScore:            app,
			AppSpecificWeight:           1,
			IPColocationFactorWeight:    -100,
			IPColocationFactorThreshold: 5,
			// Local testnets put every node on one address.
			IPColocationFactorWhitelist: []*net.IPNet{loopback},
			BehaviourPenaltyWeight:      -10,
			BehaviourPenaltyThreshold:   6,
			BehaviourPenaltyDecay:       pubsub.ScoreParameterDecay(time.Hour),
			DecayInterval:               time.Second,
			DecayToZero:                 0.01,
			RetainScore:                 6 * time.Hour,
		}, &pubsub.PeerScoreThresholds{
			GossipThreshold:             GossipThreshold,
			PublishThreshold:            PublishThreshold,
			GraylistThreshold:           GraylistThreshold,
			AcceptPXThreshold:           1000,
			OpportunisticGraftThreshold: 3.5,
		}
}

// newPubSub starts GossipSub without its own message signatures (every
// message is a signed envelope, SPEC §14: a second signature would double
// the checks per delivery), content-addressed message IDs (so re-published
// bytes are duplicates) and peer scoring. inspect receives peer scores
// every second; extra options follow.
func newPubSub(ctx context.Context, h host.Host, inspect func(map[peer.ID]float64), app func(peer.ID) float64, extra ...pubsub.Option) (*pubsub.PubSub, error) {
	params, thresholds := peerScoreParams(app)
	opts := []pubsub.Option{
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithMessageIdFn(func(m *pubsubpb.Message) string { return protocol.GossipID(m.Data) }),
		pubsub.WithPeerScore(params, thresholds),
		pubsub.WithMaxMessageSize(2 * protocol.MaxEnvelope(pb.MessageType_EQUIVOCATION_PROOF)),
		// A round sends bursts of small messages (challenge, commitment,
		// reveal per miner); the default 32-deep queues drop some of them,
		// epoch records included, once a validator serves tens of miners.
		pubsub.WithPeerOutboundQueueSize(1024),
		// A node's own messages (challenges, commitments, reveals, epoch
		// records) go to every topic peer, not only its mesh: miners are
		// often connected to validators alone, outside their mesh.
		pubsub.WithFloodPublish(true),
		pubsub.WithValidateQueueSize(1024),
	}
	if inspect != nil {
		opts = append(opts, pubsub.WithPeerScoreInspect(pubsub.ExtendedPeerScoreInspectFn(func(m map[peer.ID]*pubsub.PeerScoreSnapshot) {
			scores := make(map[peer.ID]float64, len(m))
			for p, s := range m {
				scores[p] = s.Score
			}
			inspect(scores)
		}), time.Second))
	}
	return pubsub.NewGossipSub(ctx, h, append(opts, extra...)...)
}

// keepBootstrapped dials the configured peers and redials any that are not
// connected, backing off from 500 ms to 30 s per peer, until ctx ends: a
// node may start before its bootstrap peers, and they may restart.
func keepBootstrapped(ctx context.Context, h host.Host, addrs []string, log *slog.Logger) {
	type target struct {
		info    peer.AddrInfo
		backoff time.Duration
		next    time.Time
	}
	var targets []*target
	for _, a := range addrs {
		info, err := peer.AddrInfoFromString(a)
		if err != nil {
			log.Warn("bad bootstrap address", "addr", a, "err", err)
			continue
		}
		targets = append(targets, &target{info: *info, backoff: 500 * time.Millisecond})
	}
	if len(targets) == 0 {
		return
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		for _, t := range targets {
			if h.Network().Connectedness(t.info.ID) == network.Connected || now.Before(t.next) {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := h.Connect(cctx, t.info)
			cancel()
			if err == nil {
				log.Info("connected to bootstrap peer", "peer", t.info.ID)
				t.backoff = 500 * time.Millisecond
				continue
			}
			log.Debug("bootstrap dial failed; will retry", "peer", t.info.ID, "in", t.backoff, "err", err)
			t.next = time.Now().Add(t.backoff)
			t.backoff = min(2*t.backoff, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

type mdnsNotifee struct {
	ctx context.Context
	h   host.Host
	log *slog.Logger
}

func (n mdnsNotifee) HandlePeerFound(pi peer.AddrInfo) {
	if pi.ID == n.h.ID() {
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, 10*time.Second)
	defer cancel()
	if err := n.h.Connect(ctx, pi); err == nil {
		n.log.Info("mdns: connected", "peer", pi.ID)
	}
}

// startDiscovery runs the opt-in discovery services: mDNS on the LAN, and a
// kad-dht under the /pog prefix so pog nodes never join the public IPFS DHT.
func startDiscovery(ctx context.Context, h host.Host, cfg config.NodeConfig, log *slog.Logger) (func(), error) {
	var closers []func() error
	if cfg.MDNS {
		svc := mdns.NewMdnsService(h, "pog-mdns", mdnsNotifee{ctx, h, log})
		if err := svc.Start(); err != nil {
			return nil, fmt.Errorf("mdns: %w", err)
		}
		closers = append(closers, svc.Close)
	}
	if cfg.DHT {
		var boot []peer.AddrInfo
		for _, a := range cfg.Bootstrap {
			if info, err := peer.AddrInfoFromString(a); err == nil {
				boot = append(boot, *info)
			}
		}
		kad, err := dht.New(h, dht.ProtocolPrefix("/pog"), dht.Mode(dht.ModeAutoServer), dht.BootstrapPeers(boot...))
		if err != nil {
			return nil, fmt.Errorf("dht: %w", err)
		}
		closers = append(closers, kad.Close)
		if err := kad.Bootstrap(ctx); err != nil {
			return nil, fmt.Errorf("dht bootstrap: %w", err)
		}
		rd := drouting.NewRoutingDiscovery(kad)
		dutil.Advertise(ctx, rd, rendezvous)
		go findPeers(ctx, h, rd, log)
	}
	return func() {
		for _, c := range closers {
			c()
		}
	}, nil
}

const rendezvous = "/pog/1/nodes"

func findPeers(ctx context.Context, h host.Host, rd *drouting.RoutingDiscovery, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		peers, err := rd.FindPeers(ctx, rendezvous)
		if err == nil {
			for p := range peers {
				if p.ID != h.ID() && len(p.Addrs) > 0 && h.Network().Connectedness(p.ID) != network.Connected {
					if err := h.Connect(ctx, p); err == nil {
						log.Debug("dht: connected", "peer", p.ID)
					}
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

// fitLimits raises the resource manager's limits to hold what the
// connection manager keeps. libp2p scales them with memory, below a
// validator's miners: 256 inbound connections on 24 GB, so the miners past
// them could not connect (BENCHMARKS.md, the 300-miner run); and 252
// inbound identify streams, so with hundreds of miners connecting at once
// identify failed for some, GossipSub (which adds a peer when identify
// completes) never added them, and every record the validator published
// to them was dropped ("no send queue"; the 1,000-miner run). Streams are
// sized per connection: identify and ping one each way, GossipSub one
// each way, and a few of pog's own (rounds, host rounds, sync).
func fitLimits(c rcmgr.ConcreteLimitConfig, highWater int) rcmgr.ConcreteLimitConfig {
	need := rcmgr.LimitVal(highWater + highWater/4)
	p := c.ToPartialLimitConfig()
	sys := &p.System
	for _, l := range []*rcmgr.LimitVal{&sys.Conns, &sys.ConnsInbound, &sys.ConnsOutbound} {
		raise(l, need)
	}
	fitStreams(&p.System, 8*need)
	fitStreams(&p.Transient, need)
	fitStreams(&p.ProtocolDefault, 2*need)
	fitStreams(&p.ServiceDefault, 2*need)
	if p.Service == nil {
		p.Service = map[string]rcmgr.ResourceLimits{}
	}
	if p.Protocol == nil {
		p.Protocol = map[libp2pprotocol.ID]rcmgr.ResourceLimits{}
	}
	for _, svc := range []string{identify.ServiceName, ping.ServiceName} {
		l := p.Service[svc]
		fitStreams(&l, need)
		p.Service[svc] = l
	}
	for _, proto := range []libp2pprotocol.ID{identify.ID, identify.IDPush, ping.ID} {
		l := p.Protocol[proto]
		fitStreams(&l, need)
		p.Protocol[proto] = l
	}
	return p.Build(c)
}

// fitStreams raises l's stream limits to n each way (2n in all).
func fitStreams(l *rcmgr.ResourceLimits, n rcmgr.LimitVal) {
	raise(&l.StreamsInbound, n)
	raise(&l.StreamsOutbound, n)
	raise(&l.Streams, 2*n)
}

// raise sets a limit below n to n; unlimited and blocked ones stay.
func raise(l *rcmgr.LimitVal, n rcmgr.LimitVal) {
	if *l >= 0 && *l < n {
		*l = n
	}
}

// connWatermarks are the connection manager's marks for a node of role
// with cfg: a validator keeps a connection to each of the max_miners
// miners it may schedule and to the other validators, whatever the
// configured marks, which suit a miner.
func connWatermarks(role Role, cfg config.Config) (low, high int) {
	low, high = cfg.Node.LowWater, cfg.Node.HighWater
	if role == RoleValidator {
		low = max(low, cfg.Validator.MaxMiners+len(cfg.Network.Validators)+validatorConnMargin)
		high = max(high, low+low/4)
	}
	return low, high
}

// validatorConnMargin is room beyond its miners and validators for the
// peers a validator also serves: auditors, syncing nodes, new miners.
const validatorConnMargin = 64

// NewAuditHost is a libp2p host for an auditor: a fresh identity that
// listens on nothing, on the given transport (as Options.Transport) or TCP
// and QUIC.
func NewAuditHost(transport ...libp2p.Option) (host.Host, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	nc := config.DefaultConfig().Node
	nc.Listen = nil
	return newHost(key, nc, transport...)
}
