package node

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// openChallenge is a challenge this node has seen on gossip.
type openChallenge struct {
	id        [32]byte
	validator peer.ID
	miner     peer.ID
	msg       *pb.Challenge
	params    []proof.Params
	received  time.Time // on this node's clock: deadlines are relative to receipt
	roots     [][]byte  // from the miner's commitment, once seen
}

// expires is when a challenge stops mattering: commitments are accepted
// until 2 × its deadline after receipt.
func (c *openChallenge) expires() time.Time {
	return c.received.Add(2 * time.Duration(c.msg.DeadlineMs) * time.Millisecond)
}

// pair is one validator's rounds with one miner: at most one challenge
// each is open at a time.
type pair struct{ validator, miner peer.ID }

// view is what a node knows that gossip rules depend on. It is bounded
// without evicting by count, so a flood cannot push out other validators'
// challenges: one open challenge per validator–miner pair (a newer one
// replaces it), at most maxOpenPerValidator per validator, and challenges
// leave on expiry.
type view struct {
	mu          sync.Mutex
	epochLength time.Duration
	trustAny    bool
	validators  map[peer.ID]bool
	challenges  map[[32]byte]*openChallenge
	order       [][32]byte // arrival order, for expiry
	byPair      map[pair][32]byte
	perVal      map[peer.ID]int // open challenges per validator
	buckets     map[pair]*bucket
	newKeys     map[peer.ID]*bucket // per connection: announces from new keys
	strikes     map[peer.ID]*strike
	announceSeq map[peer.ID]seqSeen
	rootOwner   map[[32]byte]peer.ID // committed roots, for output-reuse detection
	slots       *slotRule            // nil: any time from any validator (no set, or trust_any_validator)
	offSchedule map[peer.ID]uint64   // off-schedule challenges per listed signer (offschedule.go)
}

const maxOpenChallenges = 20000

// maxOpenPerValidator bounds one validator's open challenges; more are
// Ignored. An honest validator schedules at most validator.max_miners ≤
// protocol.MaxEpochMiners miners at once, with one challenge each in
// flight, and a challenge stays open here for 2 × its deadline while its
// round lasts at most its deadline: the miners it dropped for others
// hold at most as many again.
const maxOpenPerValidator = 2 * protocol.MaxEpochMiners

func newView(epochLength time.Duration, trustAny bool, validators []peer.ID) *view {
	v := &view{
		epochLength: epochLength, trustAny: trustAny,
		validators: map[peer.ID]bool{}, challenges: map[[32]byte]*openChallenge{},
		byPair: map[pair][32]byte{}, perVal: map[peer.ID]int{},
		buckets: map[pair]*bucket{}, strikes: map[peer.ID]*strike{}, newKeys: map[peer.ID]*bucket{},
		announceSeq: map[peer.ID]seqSeen{}, rootOwner: map[[32]byte]peer.ID{}, offSchedule: map[peer.ID]uint64{},
	}
	for _, p := range validators {
		v.validators[p] = true
	}
	return v
}

func (v *view) epochAt(t time.Time) uint64 {
	return uint64(t.UnixNano() / int64(v.epochLength))
}

// decision is a gossip validation outcome with its reason, for logs and tests.
type decision struct {
	result pubsub.ValidationResult
	reason string
}

var accept = decision{result: pubsub.ValidationAccept}

func reject(reason string) decision { return decision{pubsub.ValidationReject, reason} }
func ignore(reason string) decision { return decision{pubsub.ValidationIgnore, reason} }

// seqSeen is the last announce seq of a miner and when it came.
type seqSeen struct {
	seq uint64
	at  time.Time
}

// Announcers are forgotten an hour after their last announce (miners
// announce every few minutes), and at most maxAnnouncers are tracked: while
// the table is full of live miners, announces from new keys are Ignored,
// so a stream of fresh identities cannot grow it.
const (
	announceForget = time.Hour
	maxAnnouncers  = 20000
)

func (v *view) checkAnnounce(o *protocol.Opened, now time.Time) decision {
	m := o.Msg.(*pb.MinerAnnounce)
	v.mu.Lock()
	defer v.mu.Unlock()
	last, known := v.announceSeq[o.Author]
	if known && m.Seq <= last.seq {
		return ignore("stale announce")
	}
	if !known && len(v.announceSeq) >= maxAnnouncers {
		for p, s := range v.announceSeq {
			if now.Sub(s.at) > announceForget {
				delete(v.announceSeq, p)
			}
		}
		if len(v.announceSeq) >= maxAnnouncers {
			return ignore("announce from a new key while the announcer table is full")
		}
	}
	v.announceSeq[o.Author] = seqSeen{m.Seq, now}
	return accept
}

func (v *view) checkChallenge(o *protocol.Opened, now time.Time) decision {
	_, fresh, d := v.openChallenge(o, now)
	if d.result == accept.result && !fresh {
		return ignore("duplicate challenge")
	}
	return d
}

// openChallenge is the view's challenge o, added first if o passes the
// gossip rules (fresh then), nil with the reason if it does not. The lookup
// and the adding are one step: a miner admitting o from a round stream
// while gossip brings it too must find it either way.
func (v *view) openChallenge(o *protocol.Opened, now time.Time) (c *openChallenge, fresh bool, d decision) {
	m := o.Msg.(*pb.Challenge)
	id := protocol.ID(o.Body)
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.challenges[id]; c != nil {
		return c, false, accept
	}
	if !v.trustAny && !v.validators[o.Author] {
		return nil, false, reject("challenge from a peer that is not a validator")
	}
	// Clock windows Ignore: an honest peer whose clock is off must not be
	// graylisted; what is outside the window is only of no use here.
	if e := v.epochAt(now); m.Epoch+1 < e || m.Epoch > e+1 {
		return nil, false, ignore("challenge for epoch outside the current ±1 (expired, from the future, or a skewed clock)")
	}
	params, _ := protocol.ChallengeParams(m) // Open validated them
	miner, _ := peer.IDFromBytes(m.Miner)
	if !v.allowChallenge(pair{o.Author, miner}, now) {
		return nil, false, ignore("challenges to this miner above the rate (costs the validator peer score)")
	}
	if d, ok := v.onSchedule(o.Author, miner, now); !ok {
		return nil, false, d
	}
	c = &openChallenge{id: id, validator: o.Author, miner: miner, msg: m, params: params, received: now}
	if !v.add(c, now) {
		return nil, false, ignore("validator has too many open challenges")
	}
	return c, true, accept
}

// add opens c, replacing its pair's previous challenge (the validator has
// moved on). It refuses c if the validator already has maxOpenPerValidator
// open, and first drops challenges expired at now.
func (v *view) add(c *openChallenge, now time.Time) bool {
	v.expire(now)
	k := pair{c.validator, c.miner}
	if old, ok := v.byPair[k]; ok {
		v.drop(old)
	}
	if v.perVal[c.validator] >= maxOpenPerValidator {
		return false
	}
	v.challenges[c.id] = c
	v.order = append(v.order, c.id)
	v.byPair[k] = c.id
	v.perVal[c.validator]++
	return true
}

// expire drops challenges from the front of the arrival order that have
// expired or were replaced; the order is compacted as it shrinks.
func (v *view) expire(now time.Time) {
	i := 0
	for ; i < len(v.order); i++ {
		c := v.challenges[v.order[i]]
		if c != nil && now.Before(c.expires()) {
			break
		}
		if c != nil {
			v.drop(c.id)
		}
	}
	v.order = v.order[i:]
	if cap(v.order) > 2*len(v.order)+64 {
		v.order = append([][32]byte(nil), v.order...)
	}
}

// drop forgets one challenge and the roots only it committed.
func (v *view) drop(id [32]byte) {
	c := v.challenges[id]
	if c == nil {
		return
	}
	delete(v.challenges, id)
	if k := (pair{c.validator, c.miner}); v.byPair[k] == id {
		delete(v.byPair, k)
	}
	if v.perVal[c.validator]--; v.perVal[c.validator] <= 0 {
		delete(v.perVal, c.validator)
	}
	for _, r := range c.roots {
		if v.rootOwner[[32]byte(r)] == c.miner {
			delete(v.rootOwner, [32]byte(r))
		}
	}
}

func (v *view) checkCommitment(o *protocol.Opened, now time.Time) decision {
	m := o.Msg.(*pb.Commitment)
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.challenges[[32]byte(m.ChallengeId)]
	switch {
	case c == nil:
		return ignore("commitment for an unknown challenge")
	case o.Author != c.miner:
		return reject("commitment from a peer the challenge was not for")
	case len(m.Roots) != int(c.msg.Steps)*len(c.params):
		return reject("commitment has the wrong number of roots (steps × sub-challenges)")
	case c.roots != nil:
		return ignore("duplicate commitment")
	case now.Sub(c.received) > 2*time.Duration(c.msg.DeadlineMs)*time.Millisecond:
		return ignore("commitment long past its deadline")
	}
	c.roots = m.Roots
	for _, r := range m.Roots {
		if _, seen := v.rootOwner[[32]byte(r)]; !seen {
			v.rootOwner[[32]byte(r)] = o.Author
		}
	}
	return accept
}

func (v *view) checkReveal(o *protocol.Opened) decision {
	m := o.Msg.(*pb.Reveal)
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.challenges[[32]byte(m.ChallengeId)]
	switch {
	case c == nil:
		return ignore("reveal for an unknown challenge")
	case o.Author != c.validator:
		return reject("reveal from a peer that did not send the challenge")
	case sample.Commit([32]byte(m.Secret)) != [32]byte(c.msg.SecretCommitment):
		return reject("revealed secret does not match its commitment")
	}
	return accept
}

// checkEpochRecord accepts a validator's record for an epoch that has
// ended (or is ending, allowing for clock skew). Duplicates and equivocation
// are told apart against the store (Node.checkStored).
func (v *view) checkEpochRecord(o *protocol.Opened, now time.Time) decision {
	m := o.Msg.(*pb.EpochRecord)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.trustAny && !v.validators[o.Author] {
		return reject("epoch record from a peer that is not a validator")
	}
	if m.Epoch > v.epochAt(now) {
		return ignore("epoch record for an epoch that has not ended here (a skewed clock)")
	}
	return accept
}

// checkEquivocation accepts a proof (Open checked it) against a validator
// for an epoch that has ended.
func (v *view) checkEquivocation(o *protocol.Opened, now time.Time) decision {
	eq, _ := protocol.CheckEquivocation(o.Msg.(*pb.EquivocationProof))
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.trustAny && !v.validators[eq.Validator] {
		return reject("equivocation proof against a peer that is not a validator")
	}
	if eq.Epoch > v.epochAt(now) {
		return ignore("equivocation proof for an epoch that has not ended here (a skewed clock)")
	}
	return accept
}

// otherRoot says whether a miner other than miner committed root. (A copy
// of every such root for each round, as before, grew with the network:
// 12 % of a 300-miner run's allocations.)
func (v *view) otherRoot(miner peer.ID, root commit.CV) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	owner, ok := v.rootOwner[root]
	return ok && owner != miner
}

// topicCheck opens a gossiped message of the topic's type and applies the
// view's rules; a message that fails Open is provably bad and rejected.
func (v *view) topicCheck(topic string, data []byte, now time.Time) (*protocol.Opened, decision) {
	typ := topicType[topic]
	if len(data) > protocol.MaxGossipBytes && typ != pb.MessageType_EPOCH_RECORD && typ != pb.MessageType_EQUIVOCATION_PROOF {
		return nil, reject("oversized message")
	}
	o, err := protocol.Open(data, typ)
	if err != nil {
		return nil, reject(err.Error())
	}
	switch typ {
	case pb.MessageType_MINER_ANNOUNCE:
		return o, v.checkAnnounce(o, now)
	case pb.MessageType_CHALLENGE:
		return o, v.checkChallenge(o, now)
	case pb.MessageType_COMMITMENT:
		return o, v.checkCommitment(o, now)
	case pb.MessageType_EPOCH_RECORD:
		return o, v.checkEpochRecord(o, now)
	case pb.MessageType_EQUIVOCATION_PROOF:
		return o, v.checkEquivocation(o, now)
	}
	return o, v.checkReveal(o)
}

var topicType = map[string]pb.MessageType{
	protocol.TopicAnnounce:     pb.MessageType_MINER_ANNOUNCE,
	protocol.TopicChallenge:    pb.MessageType_CHALLENGE,
	protocol.TopicCommitment:   pb.MessageType_COMMITMENT,
	protocol.TopicReveal:       pb.MessageType_REVEAL,
	protocol.TopicEpoch:        pb.MessageType_EPOCH_RECORD,
	protocol.TopicEquivocation: pb.MessageType_EQUIVOCATION_PROOF,
}
