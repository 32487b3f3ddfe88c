package node

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

type actor struct {
	key crypto.PrivKey
	id  peer.ID
}

func newActor(t *testing.T) actor {
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(k)
	return actor{k, id}
}

func (a actor) seal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protocol.Seal(a.key, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGossipRules walks one round's messages through a node's view and
// checks each Accept, Reject and Ignore decision (SPEC.md §15).
func TestGossipRules(t *testing.T) {
	val, miner, other := newActor(t), newActor(t), newActor(t)
	now := time.Unix(1_800_000_000, 0)
	v := newView(time.Minute, false, []peer.ID{val.id})
	epoch := v.epochAt(now)
	secret := [32]byte{1}
	commitment := sample.Commit(secret)
	mkChallenge := func(e uint64, nonce byte) *pb.Challenge {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner.id)}
		p.Nonce[0] = nonce
		b, _ := p.MarshalBinary()
		return &pb.Challenge{Version: 1, Epoch: e, Round: 1, Miner: []byte(miner.id), Params: [][]byte{b},
			SecretCommitment: commitment[:], Samples: 4, DeadlineMs: 1000, Steps: 1, FirstRootMs: 500}
	}
	chRaw := val.seal(t, mkChallenge(epoch, 1))
	o, _ := protocol.Open(chRaw, pb.MessageType_CHALLENGE)
	id := protocol.ID(o.Body)
	commit := func(roots int) *pb.Commitment {
		c := &pb.Commitment{Version: 1, ChallengeId: id[:]}
		for i := 0; i < roots; i++ {
			c.Roots = append(c.Roots, make([]byte, 32))
		}
		return c
	}
	unknown := [32]byte{9}
	steps := []struct {
		name  string
		topic string
		data  []byte
		at    time.Time
		want  pubsub.ValidationResult
	}{
		{"announce", protocol.TopicAnnounce, miner.seal(t, &pb.MinerAnnounce{Version: 1, Seq: 5, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}), now, pubsub.ValidationAccept},
		{"stale announce", protocol.TopicAnnounce, miner.seal(t, &pb.MinerAnnounce{Version: 1, Seq: 4, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}), now, pubsub.ValidationIgnore},
		{"garbage", protocol.TopicChallenge, []byte{0xff, 0x01}, now, pubsub.ValidationReject},
		{"oversized", protocol.TopicAnnounce, make([]byte, protocol.MaxGossipBytes+1), now, pubsub.ValidationReject},
		{"challenge from non-validator", protocol.TopicChallenge, other.seal(t, mkChallenge(epoch, 2)), now, pubsub.ValidationReject},
		// Clock windows Ignore: a skewed honest clock is not malice.
		{"expired challenge", protocol.TopicChallenge, val.seal(t, mkChallenge(epoch-2, 4)), now, pubsub.ValidationIgnore},
		{"future challenge", protocol.TopicChallenge, val.seal(t, mkChallenge(epoch+2, 5)), now, pubsub.ValidationIgnore},
		{"epoch record from the future", protocol.TopicEpoch, val.seal(t, &pb.EpochRecord{Version: 1, Epoch: epoch + 1,
			RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)}), now, pubsub.ValidationIgnore},
		{"epoch record", protocol.TopicEpoch, val.seal(t, &pb.EpochRecord{Version: 1, Epoch: epoch - 1,
			RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)}), now, pubsub.ValidationAccept},
		{"challenge", protocol.TopicChallenge, chRaw, now, pubsub.ValidationAccept},
		{"duplicate challenge", protocol.TopicChallenge, chRaw, now, pubsub.ValidationIgnore},
		{"commitment for unknown challenge", protocol.TopicCommitment, miner.seal(t, &pb.Commitment{Version: 1, ChallengeId: unknown[:], Roots: [][]byte{make([]byte, 32)}}), now, pubsub.ValidationIgnore},
		{"commitment from another miner", protocol.TopicCommitment, other.seal(t, commit(1)), now, pubsub.ValidationReject},
		{"commitment with two roots for one sub-challenge", protocol.TopicCommitment, miner.seal(t, commit(2)), now, pubsub.ValidationReject},
		{"late commitment", protocol.TopicCommitment, miner.seal(t, commit(1)), now.Add(3 * time.Second), pubsub.ValidationIgnore},
		{"commitment", protocol.TopicCommitment, miner.seal(t, commit(1)), now.Add(500 * time.Millisecond), pubsub.ValidationAccept},
		{"second commitment", protocol.TopicCommitment, miner.seal(t, &pb.Commitment{Version: 1, ChallengeId: id[:], Roots: [][]byte{make([]byte, 32)}, ComputeMs: 7}), now, pubsub.ValidationIgnore},
		{"reveal by another peer", protocol.TopicReveal, other.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: secret[:]}), now, pubsub.ValidationReject},
		{"reveal of a wrong secret", protocol.TopicReveal, val.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: make([]byte, 32)}), now, pubsub.ValidationReject},
		{"reveal", protocol.TopicReveal, val.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: secret[:]}), now, pubsub.ValidationAccept},
	}
	for _, s := range steps {
		_, d := v.topicCheck(s.topic, s.data, s.at)
		if d.result != s.want {
			t.Errorf("%s: got %s (%s), want %s", s.name, resultName(d.result), d.reason, resultName(s.want))
		}
	}
	if !v.otherRoot(other.id, [32]byte{}) {
		t.Error("the miner's committed root is not known to other miners' checks")
	}
	if v.otherRoot(miner.id, [32]byte{}) {
		t.Error("a miner's own root counts against it")
	}
	if v.otherRoot(other.id, [32]byte{1}) {
		t.Error("a root nobody committed counts as another miner's")
	}
}

func TestViewIsBounded(t *testing.T) {
	// A listed validator floods: 20,000 challenges to one miner, then one
	// to each of 20,000 made-up miners. Another validator's open challenge
	// stays, and the view never holds more than the bounds.
	v := newView(time.Minute, true, nil)
	now := time.Unix(1000, 0)
	flooder, honest, miner := peer.ID("flooder"), peer.ID("honest"), peer.ID("miner")
	ch := func(i int, val, m peer.ID) *openChallenge {
		return &openChallenge{id: [32]byte{byte(i), byte(i >> 8), byte(i >> 16), 1}, validator: val, miner: m,
			msg: &pb.Challenge{DeadlineMs: 10000}, received: now}
	}
	kept := ch(0, honest, miner)
	if !v.add(kept, now) {
		t.Fatal("honest challenge refused")
	}
	for i := 1; i <= 20000; i++ {
		v.add(ch(i, flooder, miner), now)
	}
	if len(v.challenges) != 2 || v.challenges[kept.id] == nil {
		t.Fatalf("after a one-pair flood the view holds %d challenges (honest kept: %v)", len(v.challenges), v.challenges[kept.id] != nil)
	}
	refused := 0
	for i := 20001; i <= 40000; i++ {
		if !v.add(ch(i, flooder, peer.ID(fmt.Sprint("m", i))), now) {
			refused++
		}
	}
	if v.perVal[flooder] != maxOpenPerValidator || refused != 20000-maxOpenPerValidator+1 || v.challenges[kept.id] == nil {
		t.Fatalf("flooder holds %d open (refused %d), honest kept: %v", v.perVal[flooder], refused, v.challenges[kept.id] != nil)
	}
	// Expiry, not count, frees the slots: 2 × the deadline after receipt
	// every challenge and the roots only it committed are gone.
	kept.roots = [][]byte{make([]byte, 32)}
	v.rootOwner[[32]byte{}] = miner
	v.add(ch(50000, honest, peer.ID("other")), now.Add(20*time.Second))
	if len(v.challenges) != 1 || len(v.rootOwner) != 0 || len(v.byPair) != 1 || len(v.perVal) != 1 || len(v.order) != 1 {
		t.Fatalf("after expiry: %d challenges, %d roots, %d pairs, %d validators, order %d",
			len(v.challenges), len(v.rootOwner), len(v.byPair), len(v.perVal), len(v.order))
	}
}

// TestOpenLimitHoldsTwoAdmittedSets plays SPEC §15's bound: a validator
// at the largest admission (MaxEpochMiners miners, one round each in
// flight) that drops all of them for as many others, within a deadline,
// has every challenge accepted; one more is refused.
func TestOpenLimitHoldsTwoAdmittedSets(t *testing.T) {
	v := newView(time.Minute, true, nil)
	now := time.Unix(1000, 0)
	val := peer.ID("validator")
	open := func(i int, at time.Time) bool {
		return v.add(&openChallenge{id: [32]byte{byte(i), byte(i >> 8), byte(i >> 16), 2}, validator: val,
			miner: peer.ID(fmt.Sprint("m", i)), msg: &pb.Challenge{DeadlineMs: 10000}, received: at}, at)
	}
	for i := range 2 * protocol.MaxEpochMiners {
		// The second admitted set comes within the first's deadline, while
		// its challenges are still open here.
		at := now
		if i >= protocol.MaxEpochMiners {
			at = now.Add(9 * time.Second)
		}
		if !open(i, at) {
			t.Fatalf("challenge %d of two admitted sets refused", i)
		}
	}
	if open(2*protocol.MaxEpochMiners, now.Add(9*time.Second)) {
		t.Fatal("a challenge beyond two admitted sets accepted")
	}
}

// A challenge that reaches a miner on its round stream while gossip brings
// it too is admitted whichever comes first: the stream's admission finds
// the gossiped copy instead of refusing a duplicate (which failed the
// honest validator's round).
func TestStreamAdmitRacesGossip(t *testing.T) {
	val := newActor(t)
	now := time.Now()
	v := newView(time.Minute, false, []peer.ID{val.id})
	g := minerGossip{&Node{view: v}}
	for i := range 2000 {
		miner := newActor(t) // one each: the pair's challenge rate stays out of it
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner.id)}
		p.Nonce[0], p.Nonce[1] = byte(i), byte(i>>8)
		b, _ := p.MarshalBinary()
		c := sample.Commit([32]byte{1})
		raw := val.seal(t, &pb.Challenge{Version: 1, Epoch: v.epochAt(now), Round: uint64(i), Miner: []byte(miner.id), Params: [][]byte{b},
			SecretCommitment: c[:], Samples: 4, DeadlineMs: 1000, Steps: 1, FirstRootMs: 500})
		o, err := protocol.Open(raw, pb.MessageType_CHALLENGE)
		if err != nil {
			t.Fatal(err)
		}
		gossiped, start := make(chan decision), make(chan struct{})
		go func() {
			<-start
			gossiped <- v.checkChallenge(o, time.Now())
		}()
		close(start)
		if _, err := g.Admit(o); err != nil {
			t.Fatalf("challenge %d on the round stream: %v", i, err)
		}
		if d := <-gossiped; d.result == pubsub.ValidationReject {
			t.Fatalf("challenge %d by gossip: %s", i, d.reason)
		}
	}
}

// challenge is the view's open challenge id, if any.
func (v *view) challenge(id [32]byte) *openChallenge {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.challenges[id]
}
