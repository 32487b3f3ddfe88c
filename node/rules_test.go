package node

import (
	"crypto/rand"
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
		from  peer.ID
		at    time.Time
		want  pubsub.ValidationResult
	}{
		{"announce", protocol.TopicAnnounce, miner.seal(t, &pb.MinerAnnounce{Version: 1, Seq: 5, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}), miner.id, now, pubsub.ValidationAccept},
		{"stale announce", protocol.TopicAnnounce, miner.seal(t, &pb.MinerAnnounce{Version: 1, Seq: 4, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}), miner.id, now, pubsub.ValidationIgnore},
		{"garbage", protocol.TopicChallenge, []byte{0xff, 0x01}, val.id, now, pubsub.ValidationReject},
		{"oversized", protocol.TopicAnnounce, make([]byte, protocol.MaxGossipBytes+1), miner.id, now, pubsub.ValidationReject},
		{"challenge from non-validator", protocol.TopicChallenge, other.seal(t, mkChallenge(epoch, 2)), other.id, now, pubsub.ValidationReject},
		{"challenge relayed under another author", protocol.TopicChallenge, val.seal(t, mkChallenge(epoch, 3)), other.id, now, pubsub.ValidationReject},
		{"expired challenge", protocol.TopicChallenge, val.seal(t, mkChallenge(epoch-2, 4)), val.id, now, pubsub.ValidationReject},
		{"future challenge", protocol.TopicChallenge, val.seal(t, mkChallenge(epoch+2, 5)), val.id, now, pubsub.ValidationReject},
		{"challenge", protocol.TopicChallenge, chRaw, val.id, now, pubsub.ValidationAccept},
		{"duplicate challenge", protocol.TopicChallenge, chRaw, val.id, now, pubsub.ValidationIgnore},
		{"commitment for unknown challenge", protocol.TopicCommitment, miner.seal(t, &pb.Commitment{Version: 1, ChallengeId: unknown[:], Roots: [][]byte{make([]byte, 32)}}), miner.id, now, pubsub.ValidationIgnore},
		{"commitment from another miner", protocol.TopicCommitment, other.seal(t, commit(1)), other.id, now, pubsub.ValidationReject},
		{"commitment with two roots for one sub-challenge", protocol.TopicCommitment, miner.seal(t, commit(2)), miner.id, now, pubsub.ValidationReject},
		{"late commitment", protocol.TopicCommitment, miner.seal(t, commit(1)), miner.id, now.Add(3 * time.Second), pubsub.ValidationIgnore},
		{"commitment", protocol.TopicCommitment, miner.seal(t, commit(1)), miner.id, now.Add(500 * time.Millisecond), pubsub.ValidationAccept},
		{"second commitment", protocol.TopicCommitment, miner.seal(t, &pb.Commitment{Version: 1, ChallengeId: id[:], Roots: [][]byte{make([]byte, 32)}, ComputeMs: 7}), miner.id, now, pubsub.ValidationIgnore},
		{"reveal by another peer", protocol.TopicReveal, other.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: secret[:]}), other.id, now, pubsub.ValidationReject},
		{"reveal of a wrong secret", protocol.TopicReveal, val.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: make([]byte, 32)}), val.id, now, pubsub.ValidationReject},
		{"reveal", protocol.TopicReveal, val.seal(t, &pb.Reveal{Version: 1, ChallengeId: id[:], Secret: secret[:]}), val.id, now, pubsub.ValidationAccept},
	}
	for _, s := range steps {
		_, d := v.topicCheck(s.topic, s.data, s.from, s.at)
		if d.result != s.want {
			t.Errorf("%s: got %s (%s), want %s", s.name, resultName(d.result), d.reason, resultName(s.want))
		}
	}
	if roots := v.otherRoots(other.id); !roots[[32]byte{}] {
		t.Error("the miner's committed root is not known to other miners' checks")
	}
	if roots := v.otherRoots(miner.id); len(roots) != 0 {
		t.Error("a miner's own root counts against it")
	}
}

func TestViewIsBounded(t *testing.T) {
	v := newView(time.Minute, true, nil)
	for i := 0; i < maxOpenChallenges+10; i++ {
		v.add(&openChallenge{id: [32]byte{byte(i), byte(i >> 8), byte(i >> 16)}})
	}
	if len(v.challenges) != maxOpenChallenges || len(v.order) != maxOpenChallenges {
		t.Fatalf("view holds %d challenges", len(v.challenges))
	}
	if v.challenges[[32]byte{}] != nil {
		t.Fatal("oldest challenge not evicted")
	}
}
