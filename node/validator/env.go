package validator

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// Env is the node as its validator reaches it: its host, key, settings
// and store, the gossip view it reads and the topics it publishes on.
type Env struct {
	Host    host.Host
	Key     crypto.PrivKey
	Log     *slog.Logger
	Config  config.Config
	Scoring scoring.Config
	Store   *store.Store
	// Stakes are the genesis stakes the slot schedule is drawn from
	// (none: network.validators at stake 1).
	Stakes map[string]float64
	// WG counts the validator's goroutines, which the node waits for.
	WG *sync.WaitGroup
	// EpochAt is the epoch at a time; OtherRoot whether a step root was
	// seen committed by another miner than miner (round.Plan.OtherRoot).
	EpochAt   func(time.Time) uint64
	OtherRoot func(miner peer.ID, root commit.CV) bool
	// Publish seals msg and publishes it on topic; PublishRaw publishes a
	// sealed message.
	Publish    func(ctx context.Context, topic string, msg proto.Message) ([]byte, error)
	PublishRaw func(ctx context.Context, topic string, raw []byte) error
	// RAMEpoch is the RAM epoch in force at an epoch.
	RAMEpoch func(e uint64) (memwalk.Epoch, error)
	// ChallengeEvery is the network's challenge rate per miner, which
	// peers enforce: rounds start no closer.
	ChallengeEvery time.Duration
	// CheckCPU, if set, holds a check for its CPU time: a GPU round's of n
	// sampled tiles (kind CheckTiles) or a host round's of n sampled
	// segments (its hostround kind) (node.Options.CheckCPU).
	CheckCPU func(ctx context.Context, miner peer.ID, kind byte, n int)

	OnRecord    func(*store.RoundRecord)      // after a round record is stored
	OnHost      func(*store.HostRecord)       // after a host record is stored
	EpochScores func(uint64, []scoring.Score) // an epoch's scores (epoch.Scorer.Scored)
	EpochClosed func(time.Time)               // after each epoch close, stored or not
	AlterRecord func(*pb.EpochRecord)         // edits the epoch record before it is signed (tests)
}

// CheckTiles is CheckCPU's kind for a GPU round's tiles; host rounds'
// checks are asked with their hostround kinds, from 1.
const CheckTiles byte = 0
