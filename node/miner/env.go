// Package miner is the miner role: it plays the GPU rounds and host rounds
// validators open with it, serves the sampled tiles, keeps its RAM dataset
// and plot, and announces itself. It reaches the node it runs in only
// through Env: the libp2p host, its key, the log, its configuration, and
// the node's gossip rules (Gossip).
package miner

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

// Env is what a miner reaches of the node it runs in.
type Env struct {
	Host    host.Host
	Key     crypto.PrivKey
	Log     *slog.Logger
	Config  Config
	Backend kernels.Backend // computes challenges
	Gossip  Gossip
	// RAMEpoch is the RAM epoch in force at an epoch (network.ram_*).
	RAMEpoch func(epoch uint64) (memwalk.Epoch, error)
	// Observe, if set, sees each challenge that arrives on a round stream,
	// which may come before gossip brings it.
	Observe func(at time.Time, validator peer.ID, c *pb.Challenge)
	Hooks   Hooks
	// Hardware and GPUs are what the miner announces about itself.
	Hardware *pb.Hardware
	GPUs     []*pb.GPU
	Plot     *Plot // nil without a plot
}

// Config is the miner's part of the node's configuration.
type Config struct {
	Workers          int           // miner.workers
	MaxOutputBytes   uint64        // miner.max_output_bytes
	AnnounceInterval time.Duration // miner.announce_interval
	QueueLength      int           // miner.queue_length
	ProofWindow      time.Duration // miner.proof_window
	RAMBytes         uint64        // miner.ram_bytes
	// ProofTimeout is validator.proof_timeout, which also bounds each
	// wait of a miner on a validator.
	ProofTimeout time.Duration
	EpochLength  time.Duration // network.epoch_length
	// Plan is the network's validator settings, which size every GPU
	// round: the miner accepts none a plan could not give it
	// (plan.Admissible).
	Plan config.ValidatorConfig
}

// Gossip is the node's gossip as a miner uses it: its rules for
// challenges and the slot schedule, and publishing.
type Gossip interface {
	// Publish seals msg with the node's key and publishes it on topic.
	Publish(ctx context.Context, topic string, msg proto.Message) ([]byte, error)
	// Listeners signals, until ctx ends, each time a peer that may
	// challenge this miner is seen subscribing to topic (those already
	// known at once), bursts coalesced: a miner relays no announces, so
	// one it publishes reaches only the validators connected when it does.
	Listeners(ctx context.Context, topic string) (<-chan struct{}, error)
	// Admit checks a challenge its author sent on a round stream with the
	// rules gossip applies, and returns it as the node holds it.
	Admit(o *protocol.Opened) (*Challenge, error)
	// AcceptsChallenges says whether p may challenge this node.
	AcceptsChallenges(p peer.ID) bool
	// SlotOpens says whether validator may open a round with this miner
	// (gpu: a GPU miner's slots) at now; true without a slot schedule.
	SlotOpens(validator peer.ID, gpu bool, now time.Time) bool
	// HostOpens says whether validator may open a host set with this
	// miner at now (it owns a host slot opening then); true without a
	// slot schedule.
	HostOpens(validator peer.ID, now time.Time) bool
	// OffSchedule counts a round or host stream refused as off schedule
	// and returns validator's count so far.
	OffSchedule(validator peer.ID) uint64
	// KeepOffSchedule keeps raw, the challenge envelope from sent on a
	// round stream refused as off schedule at at, as evidence against its
	// signer.
	KeepOffSchedule(raw []byte, from peer.ID, at time.Time) error
	// EpochAt is the epoch at t.
	EpochAt(t time.Time) uint64
}

// Challenge is a challenge the node's gossip rules admitted.
type Challenge struct {
	ID        [32]byte
	Validator peer.ID
	Miner     peer.ID
	Msg       *pb.Challenge
	Params    []proof.Params
}

// Miner plays the rounds validators open with it: it computes each step as
// soon as its inputs are in, keeps only the tile chaining values, and
// recomputes the sampled tiles when asked.
type Miner struct {
	Env
	ctx   context.Context // Start's
	slots chan struct{}   // rounds played at once

	hostBusy sync.Mutex // held by the host round in play (host.go)
	ram      *ramHolder // the RAM dataset; nil without miner.ram_bytes

	mu     sync.Mutex
	queues map[peer.ID]*valQueue // per validator: one round in play, one waiting
	served map[[32]byte]*served
	wg     sync.WaitGroup
	played played // for the local API (played.go)
	// hostChain is the validator whose host rounds run back to back
	// (schedule.go).
	hostChain hostChain
	// announced is the last announce published, which bounds the rounds
	// the miner accepts (bound.go).
	announced atomic.Pointer[pb.MinerAnnounce]
}

// Queue is how many rounds the miner is playing now.
func (m *Miner) Queue() int { return len(m.slots) }

// Played is the miner's latest rounds and host rounds, oldest first.
func (m *Miner) Played() ([]PlayedRound, []PlayedHostRound) { return m.played.snapshot() }
