package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/node/recordsync"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// Role is what a node does beyond relaying gossip.
type Role string

// Roles.
const (
	RoleMiner     Role = "miner"
	RoleValidator Role = "validator"
)

// ParseRole maps "miner" or "validator" to its Role.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case RoleMiner, RoleValidator:
		return Role(s), nil
	}
	return "", fmt.Errorf("unknown role %q (want miner or validator)", s)
}

// Options configure New.
type Options struct {
	Config  config.Config
	Role    Role
	Key     crypto.PrivKey
	Logger  *slog.Logger
	Backend kernels.Backend // miners: computes challenges
	Store   *store.Store    // validators: round evidence (the caller closes it)
	// OnRecord, if set, is called after a validator stores a round record.
	OnRecord func(*store.RoundRecord)
	// OnHost, if set, is called after a validator stores a host record.
	OnHost func(*store.HostRecord)
	// OnScores, if set, receives this node's gossip peer scores each second.
	OnScores func(map[peer.ID]float64)
	// OnEpochRecord, if set, is called when this node stores an epoch
	// record, its own or another validator's.
	OnEpochRecord func(epoch uint64, validator peer.ID)
	// Scoring is the scoring configuration (nil: scoring.DefaultConfig).
	Scoring *scoring.Config
	// Stakes are the genesis validators' stakes; their IDs may challenge and
	// publish epoch records, like network.validators.
	Stakes map[string]float64
	// Hardware and GPUs are what a miner announces about itself (kernels/hw).
	Hardware *pb.Hardware
	GPUs     []*pb.GPU
	// OnGossip, if set, sees every accepted gossip message with its arrival
	// time (testnet measures challenge latency with it).
	OnGossip func(topic string, o *protocol.Opened, at time.Time)
	// Metrics, if set, collects the node's Prometheus metrics.
	Metrics *metrics.Metrics
	// OnEquivocation, if set, is called when this node first stores a proof
	// that validator equivocated in epoch.
	OnEquivocation func(epoch uint64, validator peer.ID)
	// Adversary holds the hooks only the testnet's adversaries set.
	Adversary Adversary
	// Plot, if set, is the miner's plot (OpenPlot), for storage host rounds.
	Plot *miner.Plot
	// CheckCPU, if set, is the CPU a validator checks on: called before
	// each GPU round's check with kind validator.CheckTiles and its tile
	// count, and before each host round's with its hostround kind and
	// sampled segments, it returns once that check's CPU time has passed
	// (the testnet's simulated validators, whose real work takes no
	// virtual time; miner orders the checks asked for in one instant).
	// Nil: the check's own time is its cost.
	CheckCPU func(ctx context.Context, miner peer.ID, kind byte, n int)
	// Transport, if set, replaces the TCP and QUIC transports: libp2p
	// options that give the host its transports and sockets (the testnet's
	// simulated network). node.listen still names what it listens on.
	Transport []libp2p.Option
}

// Adversary makes a node misbehave, each hook in one way; only the
// testnet's adversaries set them.
type Adversary struct {
	// Miner alters a miner's rounds and host rounds.
	Miner miner.Hooks
	// PongDelay, if set, makes a miner answer each ping this late, and
	// AlterAnnounce edits each of its announces before it is signed (the
	// memory-inflate adversary).
	PongDelay     time.Duration
	AlterAnnounce func(*pb.MinerAnnounce)
	// AlterEpochRecord, if set, edits a validator's epoch record before it
	// is signed (the dishonest validator).
	AlterEpochRecord func(*pb.EpochRecord)
	// EquivocateEpochRecord, if set, makes a validator publish a second
	// record for each epoch, its own record as this function alters it
	// (the equivocator; beacon-split alters only some, and a record left
	// unchanged is not published again).
	EquivocateEpochRecord func(*pb.EpochRecord)
	// Squat, if set, makes a validator challenge the miners it returns off
	// schedule, holding their host lock and queue places (squat.go; the
	// squatter).
	Squat func() []peer.ID
}

// ErrStoreFailed is what Run returns, wrapping the store's fault, when the
// store fails under a running node.
var ErrStoreFailed = errors.New("evidence store failed")

// Node is a running pog peer.
type Node struct {
	cfg    config.Config
	role   Role
	key    crypto.PrivKey
	log    *slog.Logger
	host   host.Host
	ps     *pubsub.PubSub
	topics map[string]*pubsub.Topic
	view   *view

	scoresMu sync.Mutex
	scores   map[peer.ID]float64
	onScores func(map[peer.ID]float64)

	miner     *miner.Miner
	validator *validator.Validator
	store     *store.Store
	scoring   scoring.Config
	onEpoch   func(uint64, peer.ID)
	drops     *dropTracer
	onGossip  func(string, *protocol.Opened, time.Time)
	alterRec  func(*pb.EpochRecord)
	squatOn   func() []peer.ID // Options.Squat
	sync      *recordsync.Syncer
	obs       *observer

	// Finality (node/epoch) and equivocation (equivocation.go).
	finality       *epoch.Finality
	onEquivocation func(uint64, peer.ID)
	equivocate     func(*pb.EpochRecord)

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// startMu orders Run's start-up against Close: nothing is started, and
	// no WaitGroup added to, once Close has begun (closing) to stop it.
	startMu  sync.Mutex
	closing  bool
	stopDisc func()
	// closing is taken by the first Close; later ones wait on closed, a
	// channel, so that a Close from Run while another is stopping the
	// node is durably blocked (a sync.Once waiter holds a mutex, which
	// stops a synctest bubble's clock while the first Close waits on
	// goroutines that need it).
	closeStarted atomic.Bool
	closed       chan struct{}
	closeError   error
}

// New starts a node's host and gossip; Run starts its role.
func New(ctx context.Context, o Options) (*Node, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.Role == RoleMiner && o.Backend == nil:
		return nil, errors.New("a miner needs a compute backend")
	case o.Store == nil:
		return nil, errors.New("a node needs a store: validators keep round evidence, every node keeps epoch records")
	case o.Role != RoleMiner && o.Role != RoleValidator:
		return nil, fmt.Errorf("unknown role %q", o.Role)
	}
	var validators []peer.ID
	for _, s := range o.Config.Network.Validators {
		p, _ := peer.Decode(s) // Validate checked it
		validators = append(validators, p)
	}
	for s := range o.Stakes {
		p, err := peer.Decode(s)
		if err != nil {
			return nil, fmt.Errorf("stakes: %w", err)
		}
		validators = append(validators, p)
	}
	nc := o.Config.Node
	nc.LowWater, nc.HighWater = connWatermarks(o.Role, o.Config)
	h, err := newHost(o.Key, nc, o.Transport...)
	if err != nil {
		return nil, fmt.Errorf("libp2p host: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &Node{
		cfg: o.Config, role: o.Role, key: o.Key, host: h, ctx: ctx, cancel: cancel, closed: make(chan struct{}),
		log:    o.Logger.With("node", shortID(h.ID()), "role", string(o.Role)),
		topics: map[string]*pubsub.Topic{},
		view:   newView(o.Config.Network.EpochLength.Duration, o.Config.Network.TrustAnyValidator, validators),
		scores: map[peer.ID]float64{}, onScores: o.OnScores,
		store: o.Store, scoring: scoring.DefaultConfig(), onEpoch: o.OnEpochRecord,
		onGossip: o.OnGossip, alterRec: o.Adversary.AlterEpochRecord, onEquivocation: o.OnEquivocation, equivocate: o.Adversary.EquivocateEpochRecord,
		finality: epoch.NewFinality(o.Store, o.Config.Network.FinalityEpochs, o.Config.Network.EpochLength.Duration, time.Now()),
	}
	n.view.slots = newSlotRule(o.Stakes, o.Config)
	n.squatOn = o.Adversary.Squat
	if o.Scoring != nil {
		n.scoring = *o.Scoring
	}
	n.obs = newObserver(n, o, bootstrapIDs(o.Config.Node.Bootstrap))
	for _, v := range validators {
		h.ConnManager().Protect(v, "validator")
	}
	// Those who may challenge are those who may publish epoch records.
	n.sync = recordsync.New(h, o.Store, n.log, n.view.acceptsChallenges, func() uint64 { return n.view.epochAt(time.Now()) }, n.onEpochRecord)
	n.sync.DeliverProof = func(ctx context.Context, p *pb.EquivocationProof) { n.addEquivocation(ctx, p, false) }
	h.SetStreamHandler(syncwire.SyncProtocol, n.sync.Serve)
	n.sync.OwnEvidence = o.Role == RoleValidator
	h.SetStreamHandler(syncwire.EvidenceProtocol, n.sync.ServeEvidence)
	n.drops = &dropTracer{metrics: o.Metrics, isValidator: n.view.isValidator}
	n.ps, err = newPubSub(ctx, h, n.setScores, func(p peer.ID) float64 { return n.view.appScore(p, time.Now()) }, pubsub.WithRawTracer(n.drops))
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("gossipsub: %w", err)
	}
	if err := n.joinTopics(); err != nil {
		n.Close()
		return nil, err
	}
	if n.stopDisc, err = startDiscovery(ctx, h, o.Config.Node, n.log); err != nil {
		n.Close()
		return nil, err
	}
	n.newRole(o)
	n.log.Info("node started", "peer", h.ID(), "addrs", n.Addrs())
	return n, nil
}

// joinTopics joins every gossip topic, each with its validator.
func (n *Node) joinTopics() error {
	for topic := range topicType {
		if err := n.ps.RegisterTopicValidator(topic, n.gossipValidator(topic)); err != nil {
			return err
		}
		t, err := n.ps.Join(topic)
		if err != nil {
			return err
		}
		n.topics[topic] = t
	}
	return nil
}

// newRole sets up the node's miner or validator.
func (n *Node) newRole(o Options) {
	switch o.Role {
	case RoleMiner:
		n.miner = newMiner(n, o)
	case RoleValidator:
		n.validator = newValidator(n, o)
	}
}

func shortID(p peer.ID) string {
	s := p.String()
	if len(s) > 8 {
		return s[len(s)-8:]
	}
	return s
}

// ID is the node's peer ID.
func (n *Node) ID() peer.ID { return n.host.ID() }

// GossipDrops is the gossip this node has lost without a verdict so far.
func (n *Node) GossipDrops() GossipDrops { return n.drops.drops() }

// Host exposes the libp2p host, for tests and tools.
func (n *Node) Host() host.Host { return n.host }

// Addrs lists the node's listen addresses with its /p2p suffix, ready to be
// another node's bootstrap entries.
func (n *Node) Addrs() []string {
	var out []string
	for _, a := range n.host.Addrs() {
		out = append(out, fmt.Sprintf("%s/p2p/%s", a, n.host.ID()))
	}
	return out
}

// PeerScore is this node's current gossip score of p.
func (n *Node) PeerScore(p peer.ID) float64 {
	n.scoresMu.Lock()
	defer n.scoresMu.Unlock()
	return n.scores[p]
}

func (n *Node) setScores(s map[peer.ID]float64) {
	n.scoresMu.Lock()
	n.scores = s
	n.scoresMu.Unlock()
	if n.onScores != nil {
		n.onScores(s)
	}
}

// gossipVal carries a validated message and its arrival time to the
// subscriber.
type gossipVal struct {
	opened *protocol.Opened
	at     time.Time
}

func (n *Node) gossipValidator(topic string) pubsub.ValidatorEx {
	return func(_ context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		now := time.Now()
		if topic == protocol.TopicAnnounce {
			author, err := protocol.Author(msg.Data, pb.MessageType_MINER_ANNOUNCE)
			if err != nil {
				return pubsub.ValidationReject
			}
			if !n.view.allowAnnounce(author, from, now) {
				return pubsub.ValidationIgnore // new keys from this connection above the rate
			}
		}
		o, d := n.view.topicCheck(topic, msg.Data, now)
		n.obs.metrics.Gossip(topic, resultName(d.result))
		if d.result == pubsub.ValidationAccept {
			d = n.checkStored(o)
		}
		if d.result != pubsub.ValidationAccept {
			n.log.Debug("gossip not accepted", "topic", topic, "from", from,
				"result", resultName(d.result), "reason", d.reason)
			return d.result
		}
		msg.ValidatorData = gossipVal{o, now}
		return pubsub.ValidationAccept
	}
}

func resultName(r pubsub.ValidationResult) string {
	switch r {
	case pubsub.ValidationReject:
		return "reject"
	case pubsub.ValidationIgnore:
		return "ignore"
	}
	return "accept"
}

// publish seals msg and publishes it on topic.
func (n *Node) publish(ctx context.Context, topic string, msg proto.Message) ([]byte, error) {
	raw, err := protocol.Seal(n.key, msg)
	if err != nil {
		return nil, err
	}
	return raw, n.topics[topic].Publish(ctx, raw)
}

// subscribe delivers each validated message of topic to f until ctx ends.
func (n *Node) subscribe(ctx context.Context, topic string, f func(gossipVal)) error {
	sub, err := n.topics[topic].Subscribe(pubsub.WithBufferSize(1024))
	if err != nil {
		return err
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer sub.Cancel()
		for {
			m, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if v, ok := m.ValidatorData.(gossipVal); ok {
				f(v)
			}
		}
	}()
	return nil
}

// Connect dials peers given as multiaddrs ending in /p2p/<id>.
func (n *Node) Connect(ctx context.Context, addrs ...string) error {
	for _, a := range addrs {
		info, err := peer.AddrInfoFromString(a)
		if err != nil {
			return err
		}
		if err := n.host.Connect(ctx, *info); err != nil {
			return err
		}
	}
	return nil
}

// Run starts the node's role and blocks until ctx ends, then closes the
// node.
func (n *Node) Run(ctx context.Context) error {
	// Close (from any goroutine) must stop the roles too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(n.ctx, cancel)()
	n.startMu.Lock()
	if n.closing {
		n.startMu.Unlock()
		return n.Close()
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		keepBootstrapped(ctx, n.host, n.cfg.Node.Bootstrap, n.log)
	}()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.sync.Run(ctx, recordsync.Interval(n.cfg.Network.EpochLength.Duration), &n.wg)
	}()
	n.wg.Add(1)
	go func() { defer n.wg.Done(); n.obs.run(ctx) }()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.finalityLoop(ctx)
	}()
	var err error
	for topic := range topicType {
		if !n.relays(topic) {
			continue
		}
		topic := topic
		if e := n.subscribe(ctx, topic, func(v gossipVal) { n.deliver(ctx, topic, v) }); e != nil {
			err = e
		}
	}
	if err == nil {
		switch {
		case n.miner != nil:
			n.miner.Start(ctx)
		case n.validator != nil:
			n.validator.Start(ctx)
			if n.squatOn != nil {
				go n.squat(ctx, n.squatOn)
			}
		}
	}
	n.startMu.Unlock()
	if err == nil {
		// A failed store takes no more evidence: stop rather than run on
		// without it, and let the caller reopen it or exit.
		select {
		case <-ctx.Done():
		case <-n.store.Failed():
			err = fmt.Errorf("%w: %w", ErrStoreFailed, n.store.Err())
		}
	}
	n.log.Info("shutting down")
	return errors.Join(err, n.Close())
}

// relays says whether the node subscribes to topic, and so validates and
// relays it. A validator takes every topic: it audits other validators'
// rounds and scores announces. A miner takes only the epoch records and
// equivocation proofs, which its weight and beacon follow; it publishes
// its announce and commitments to the validators it is connected to
// without receiving anyone else's. Its own rounds reach it on their
// streams, so rounds cost each other miner nothing and a round's gossip
// reaches the validators alone, not the whole network (SPEC §15).
func (n *Node) relays(topic string) bool {
	return n.role != RoleMiner || topic == protocol.TopicEpoch || topic == protocol.TopicEquivocation
}

func (n *Node) deliver(ctx context.Context, topic string, v gossipVal) {
	if n.onGossip != nil {
		n.onGossip(topic, v.opened, v.at)
	}
	switch topic {
	case protocol.TopicEpoch:
		n.onEpochRecord(ctx, v.opened)
		return
	case protocol.TopicEquivocation:
		n.addEquivocation(ctx, v.opened.Msg.(*pb.EquivocationProof), false)
		return
	}
	if topic == protocol.TopicChallenge {
		// A peer that sends valid challenges is a validator: keep its
		// connection when the connection manager trims.
		n.host.ConnManager().Protect(v.opened.Author, "validator")
		n.obs.gossip(v.at, v.opened.Author, v.opened.Msg.(*pb.Challenge), nil)
	}
	// Challenges and commitments reach the miner and validator of a round
	// over their round stream; gossip lets everyone else audit them.
	if n.validator != nil && topic == protocol.TopicAnnounce {
		n.validator.OnAnnounce(v.at, v.opened)
	}
}

// StopRoundsAt makes a validator start no round from t on
// (validator.Validator.StopRoundsAt); other roles have none.
func (n *Node) StopRoundsAt(t time.Time) {
	if n.validator != nil {
		n.validator.StopRoundsAt(t)
	}
}

// Close stops the roles, gossip and host. It is safe to call more than
// once, from any goroutine: later calls wait for the first.
func (n *Node) Close() error {
	if !n.closeStarted.CompareAndSwap(false, true) {
		<-n.closed
		return n.closeError
	}
	defer close(n.closed)
	n.cancel()
	n.startMu.Lock() // a start-up in progress finishes first
	n.closing = true
	n.startMu.Unlock()
	if n.miner != nil {
		n.miner.Stop()
	}
	n.wg.Wait()
	n.sync.Close()
	if n.stopDisc != nil {
		n.stopDisc()
	}
	n.closeError = n.host.Close()
	return n.closeError
}
