package node

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// observer is what a node tells its operator: metrics, warnings, its own
// weight after each epoch, and the snapshot the local API serves.
type observer struct {
	n       *Node
	metrics *metrics.Metrics
	stakes  map[string]float64
	started time.Time
	tick    time.Duration // how often warnings and pending epochs are checked

	mu      sync.Mutex
	watch   *watch
	seen    map[peer.ID]time.Time // validators seen on gossip, by last message
	pending map[uint64]time.Time  // epochs whose own weight is due, by when
	own     *OwnWeight
	recent  []ReceivedChallenge // miner: the last challenges to it, oldest first
}

// ReceivedChallenge is a challenge this miner received.
type ReceivedChallenge struct {
	Validator    peer.ID
	Epoch, Round uint64
	At           time.Time
}

// recentChallenges is how many received challenges a miner remembers.
const recentChallenges = 10

// OwnWeight is this node's consensus weight and incentive in an epoch.
type OwnWeight struct {
	Epoch      uint64  `json:"epoch"`
	Weight     float64 `json:"weight"`
	Incentive  float64 `json:"incentive"`
	Validators int     `json:"validators"`
}

func newObserver(n *Node, o Options, bootstrap []peer.ID) *observer {
	w := newWatch(o.Config, o.Role, bootstrap)
	if r, gpu := n.view.slots, len(o.GPUs) > 0; r != nil {
		w.owned = func(v peer.ID, from, to time.Time, limit int) int { return r.Owned(n.ID(), v, gpu, from, to, limit) }
	}
	return &observer{n: n, metrics: o.Metrics, stakes: o.Stakes, started: time.Now(), tick: time.Second,
		watch: w, seen: map[peer.ID]time.Time{}, pending: map[uint64]time.Time{}}
}

// bootstrapIDs are the peer IDs of the configured bootstrap addresses
// (Validate checked them).
func bootstrapIDs(addrs []string) []peer.ID {
	var out []peer.ID
	for _, a := range addrs {
		if info, err := peer.AddrInfoFromString(a); err == nil {
			out = append(out, info.ID)
		}
	}
	return out
}

// onRecord wraps a validator's round-record callback with the metrics.
func (ob *observer) onRecord(next func(*store.RoundRecord)) func(*store.RoundRecord) {
	return func(r *store.RoundRecord) {
		ob.metrics.Round(r.Verdict == store.VerdictVerified, r.Reason, time.Duration(r.CommitNanos), time.Duration(r.VerifyNanos), r.TFLOPS)
		if next != nil {
			next(r)
		}
	}
}

// epochClosed is deferred by the validator's epoch close with its start.
func (ob *observer) epochClosed(start time.Time) { ob.metrics.EpochClosed(time.Since(start)) }

// maxSeenValidators bounds the validators remembered for status.
const maxSeenValidators = 256

// gossip notes an accepted message: challenges and epoch records name
// their validator; a challenge to this miner feeds the warnings; an epoch
// record makes this miner's weight due once the other validators' records
// had time to arrive.
func (ob *observer) gossip(at time.Time, validator peer.ID, challenge *pb.Challenge, record *pb.EpochRecord) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if _, ok := ob.seen[validator]; validator != ob.n.ID() && (ok || len(ob.seen) < maxSeenValidators) {
		ob.seen[validator] = at
	}
	if challenge != nil && peer.ID(challenge.Miner) == ob.n.ID() && !ob.noted(validator, challenge) {
		ob.log(ob.watch.challenged(validator, at))
		if len(ob.recent) == recentChallenges {
			ob.recent = ob.recent[1:]
		}
		ob.recent = append(ob.recent, ReceivedChallenge{Validator: validator, Epoch: challenge.Epoch, Round: challenge.Round, At: at})
	}
	if record != nil {
		ob.metrics.EpochRecord()
		if _, ok := ob.pending[record.Epoch]; !ok && ob.n.role == RoleMiner && (ob.own == nil || record.Epoch > ob.own.Epoch) {
			ob.pending[record.Epoch] = at.Add(ob.settle())
		}
	}
}

// noted reports whether the challenge (by validator, epoch and round) is
// among the recent ones: it arrives both by gossip and on the round stream.
func (ob *observer) noted(validator peer.ID, c *pb.Challenge) bool {
	for _, r := range ob.recent {
		if r.Validator == validator && r.Epoch == c.Epoch && r.Round == c.Round {
			return true
		}
	}
	return false
}

// settle is how long a miner waits after an epoch's first record before
// computing its weight: a tenth of an epoch, at most 10 s.
func (ob *observer) settle() time.Duration {
	return min(ob.n.cfg.Network.EpochLength.Duration/10, 10*time.Second)
}

func (ob *observer) log(alerts []alert) {
	for _, a := range alerts {
		ob.n.log.Log(context.Background(), a.level, a.msg, a.attrs...)
	}
}

// run checks warnings and due epochs every tick until ctx ends.
func (ob *observer) run(ctx context.Context) {
	t := time.NewTicker(ob.tick)
	defer t.Stop()
	connected := func(p peer.ID) bool { return ob.n.host.Network().Connectedness(p) == network.Connected }
	for now := time.Now(); ; {
		ob.mu.Lock()
		ob.log(ob.watch.step(now, connected))
		var due []uint64
		for e, at := range ob.pending {
			if !now.Before(at) {
				due = append(due, e)
				delete(ob.pending, e)
			}
		}
		ob.mu.Unlock()
		sort.Slice(due, func(i, j int) bool { return due[i] < due[j] })
		for _, e := range due {
			ob.ownWeight(e)
		}
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
	}
}

// ownWeight computes epoch e's consensus from the stored records, as
// `pog weights` does, and logs and exports this miner's share.
func (ob *observer) ownWeight(e uint64) {
	res, err := epoch.Consensus(ob.n.store, e, ob.stakes, consensus.DefaultParams())
	if err != nil {
		ob.n.log.Warn("cannot compute this epoch's weights", "epoch", e, "err", err)
		return
	}
	w := OwnWeight{Epoch: e, Validators: len(res.Validators)}
	me := ob.n.ID().String()
	for j, m := range res.Miners {
		if m == me {
			w.Weight, w.Incentive = res.Consensus[j], res.Incentive[j]
		}
	}
	ob.mu.Lock()
	if ob.own == nil || e >= ob.own.Epoch {
		ob.own = &w
		ob.metrics.Own(e, w.Weight, w.Incentive)
	}
	ob.mu.Unlock()
	level := slog.LevelInfo
	if w.Weight == 0 {
		level = slog.LevelWarn // weighed by nobody: the operator should look
	}
	ob.n.log.Log(context.Background(), level, "epoch weight", "epoch", e, "weight", w.Weight, "incentive", w.Incentive,
		"validators", w.Validators, "miners", len(res.Miners))
}

// Snapshot is a node's live state for the local API.
type Snapshot struct {
	ID         peer.ID
	Role       Role
	Started    time.Time
	Epoch      uint64
	EpochStart time.Time
	EpochEnd   time.Time
	Listen     []string
	Peers      []PeerInfo
	Validators []SeenValidator
	Queue      int // miner: challenges waiting
	Hardware   *pb.Hardware
	GPUs       []*pb.GPU
	Own        *OwnWeight              // miner: latest epoch weight, nil before the first
	Challenges []ReceivedChallenge     // miner: the last challenges it received
	Warnings   []string                // conditions warned about that still hold
	Played     []miner.PlayedRound     // miner: its latest rounds' results, oldest first
	HostPlayed []miner.PlayedHostRound // miner: its latest host rounds, oldest first
}

// PeerInfo is one connected peer.
type PeerInfo struct {
	ID        peer.ID
	Addr      string
	Score     float64 // this node's gossip score of it
	Validator bool
}

// SeenValidator is a validator this node has had a message from.
type SeenValidator struct {
	ID        peer.ID
	LastSeen  time.Time
	Connected bool
}

// Snapshot reports the node's live state.
func (n *Node) Snapshot() Snapshot {
	now := time.Now()
	ob := n.obs
	e := n.view.epochAt(now)
	length := n.cfg.Network.EpochLength.Duration
	s := Snapshot{ID: n.ID(), Role: n.role, Started: ob.started, Epoch: e,
		EpochStart: time.Unix(0, int64(e)*int64(length)), EpochEnd: time.Unix(0, int64(e+1)*int64(length)), Listen: n.Addrs()}
	ob.mu.Lock()
	seen := map[peer.ID]bool{}
	for v, at := range ob.seen {
		seen[v] = true
		s.Validators = append(s.Validators, SeenValidator{ID: v, LastSeen: at, Connected: n.host.Network().Connectedness(v) == network.Connected})
	}
	if ob.own != nil {
		own := *ob.own
		s.Own = &own
	}
	s.Warnings = ob.watch.active()
	s.Challenges = append([]ReceivedChallenge(nil), ob.recent...)
	ob.mu.Unlock()
	sort.Slice(s.Validators, func(i, j int) bool { return s.Validators[i].ID < s.Validators[j].ID })
	for _, c := range n.host.Network().Conns() {
		p := c.RemotePeer()
		s.Peers = append(s.Peers, PeerInfo{ID: p, Addr: c.RemoteMultiaddr().String(), Score: n.PeerScore(p), Validator: seen[p] || n.view.isValidator(p)})
	}
	sort.Slice(s.Peers, func(i, j int) bool { return s.Peers[i].ID < s.Peers[j].ID })
	if n.miner != nil {
		s.Queue = n.miner.Queue()
		s.Hardware, s.GPUs = n.miner.Hardware, n.miner.GPUs
		s.Played, s.HostPlayed = n.miner.Played()
	}
	return s
}

// QueueLength is how many rounds the miner is playing at once (0 for a
// validator); each holds one of its miner.queue_length slots.
func (n *Node) QueueLength() int {
	if n.miner == nil {
		return 0
	}
	return n.miner.Queue()
}

// HeldRounds is how many committed rounds the miner holds for their
// validators' tile requests (0 for other roles).
func (n *Node) HeldRounds() int {
	if n.miner == nil {
		return 0
	}
	return n.miner.Held()
}

// isValidator reports whether p is a configured or genesis validator.
func (v *view) isValidator(p peer.ID) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.validators[p]
}
