package node

import (
	"fmt"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// A listed validator sends one miner 1,000 signed challenges a second for
// 20 s while another sends one every 2 s: every honest challenge is
// accepted and stays open, the flood beyond the rate is Ignored, the view
// stays bounded, and the flooder's application score falls below the
// gossip threshold while the honest validator's stays 0.
func TestChallengeFlood(t *testing.T) {
	flooder, honest, miner := newActor(t), newActor(t), newActor(t)
	start := time.Unix(1_800_000_000, 0)
	v := newView(time.Hour, false, []peer.ID{flooder.id, honest.id})
	challenge := func(a actor, round uint64) []byte {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner.id)}
		p.Nonce[0], p.Nonce[1], p.Nonce[2] = byte(round), byte(round>>8), byte(round>>16)
		b, _ := p.MarshalBinary()
		return a.seal(t, &pb.Challenge{Version: 1, Epoch: v.epochAt(start), Round: round, Miner: []byte(miner.id), Params: [][]byte{b},
			SecretCommitment: make([]byte, 32), Samples: 4, DeadlineMs: 1000, Steps: 1, FirstRootMs: 500})
	}
	const perSecond, seconds = 1000, 20
	accepted := map[pubsub.ValidationResult]int{}
	honestOK := 0
	for ms := 0; ms < seconds*1000; ms++ {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		if ms%(1000/perSecond) == 0 {
			_, d := v.topicCheck(protocol.TopicChallenge, challenge(flooder, uint64(ms+1)), now)
			accepted[d.result]++
		}
		if ms%2000 == 0 {
			raw := challenge(honest, uint64(ms+1)<<32)
			o, d := v.topicCheck(protocol.TopicChallenge, raw, now)
			if o == nil || d.result != pubsub.ValidationAccept {
				t.Fatalf("honest challenge at %d ms: %s", ms, d.reason)
			}
			if v.challenge(protocol.ID(o.Body)) != nil {
				honestOK++
			}
		}
	}
	end := start.Add(seconds * time.Second)
	if honestOK != seconds/2 {
		t.Errorf("%d of %d honest challenges accepted and open", honestOK, seconds/2)
	}
	if n := accepted[pubsub.ValidationAccept]; n > challengeBurst+seconds+1 {
		t.Errorf("%d flood challenges accepted, want at most the burst plus one a second", n)
	}
	if accepted[pubsub.ValidationReject] != 0 {
		t.Errorf("%d flood challenges rejected: the rate is a policy, not proof of malice", accepted[pubsub.ValidationReject])
	}
	if s := v.appScore(flooder.id, end); s >= GossipThreshold {
		t.Errorf("flooder's application score %v, want below the gossip threshold %d", s, GossipThreshold)
	}
	if s := v.appScore(honest.id, end); s != 0 {
		t.Errorf("honest validator's application score %v, want 0", s)
	}
	if len(v.challenges) > 2 || len(v.byPair) > 2 {
		t.Errorf("view holds %d challenges, %d pairs after the flood", len(v.challenges), len(v.byPair))
	}
	// Strikes fade: an hour later the flooder is forgiven.
	if s := v.appScore(flooder.id, end.Add(time.Hour)); s < -1 {
		t.Errorf("flooder's score an hour later %v", s)
	}
}

// A stream of fresh announcing identities cannot grow the announcer table:
// it is capped, new keys are Ignored while it is full of live miners, and
// miners silent for an hour make room.
func TestAnnouncersBounded(t *testing.T) {
	v := newView(time.Minute, true, nil)
	now := time.Unix(1_800_000_000, 0)
	for i := 0; i < maxAnnouncers; i++ {
		v.announceSeq[peer.ID(fmt.Sprint("m", i))] = seqSeen{1, now}
	}
	fresh := newActor(t)
	ann := fresh.seal(t, &pb.MinerAnnounce{Version: 1, Seq: 1, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20})
	if _, d := v.topicCheck(protocol.TopicAnnounce, ann, now); d.result != pubsub.ValidationIgnore {
		t.Fatalf("new key with a full table: %v (%s), want Ignore", d.result, d.reason)
	}
	if _, d := v.topicCheck(protocol.TopicAnnounce, ann, now.Add(announceForget+time.Second)); d.result != pubsub.ValidationAccept {
		t.Fatalf("new key after the others went silent: %v (%s), want Accept", d.result, d.reason)
	}
	if len(v.announceSeq) != 1 {
		t.Fatalf("%d announcers tracked, want only the live one", len(v.announceSeq))
	}
}

// Announces from new keys are limited per delivering connection; known
// miners and other connections are not held back.
func TestNewKeysPerConnection(t *testing.T) {
	v := newView(time.Minute, true, nil)
	now := time.Unix(1_800_000_000, 0)
	conn, other, known := peer.ID("conn"), peer.ID("other"), peer.ID("known")
	v.announceSeq[known] = seqSeen{1, now}
	allowed := 0
	for i := 0; i < 1000; i++ {
		if v.allowAnnounce(peer.ID(fmt.Sprint("fresh", i)), conn, now) {
			allowed++
		}
	}
	if allowed != newKeyBurst {
		t.Fatalf("%d new keys from one connection at once, want the burst %d", allowed, newKeyBurst)
	}
	if !v.allowAnnounce(known, conn, now) || !v.allowAnnounce(peer.ID("fresh-x"), other, now) {
		t.Fatal("a known miner or another connection was held back")
	}
	if !v.allowAnnounce(peer.ID("fresh-y"), conn, now.Add(newKeyEvery)) {
		t.Fatal("the connection's bucket did not refill")
	}
}
