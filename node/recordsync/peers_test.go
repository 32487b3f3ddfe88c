package recordsync

import (
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// The periodic pass visits peers in ID order from where it stopped, so
// every peer is synced with within ⌈peers/n⌉ ticks, whatever order the
// host lists its connections in; a peer that left is stepped over.
func TestNextPeersVisitsEveryPeer(t *testing.T) {
	peers := []peer.ID{"e", "a", "d", "b", "c"}
	var last peer.ID
	var got [][]peer.ID
	for range 3 {
		next := nextPeers(peers, last, 2)
		got = append(got, next)
		last = next[len(next)-1]
		slices.Reverse(peers) // connection order must not matter
	}
	want := [][]peer.ID{{"a", "b"}, {"c", "d"}, {"e", "a"}}
	if !slices.EqualFunc(got, want, slices.Equal[[]peer.ID]) {
		t.Errorf("ticks chose %v, want %v", got, want)
	}
	if next := nextPeers([]peer.ID{"a", "c", "d"}, "b", 2); !slices.Equal(next, []peer.ID{"c", "d"}) {
		t.Errorf("after a peer that left: %v, want [c d]", next)
	}
	if next := nextPeers([]peer.ID{"a"}, "a", 4); !slices.Equal(next, []peer.ID{"a"}) {
		t.Errorf("one peer: %v", next)
	}
	if next := nextPeers(nil, "", 4); len(next) != 0 {
		t.Errorf("no peers: %v", next)
	}
}

// What the syncer holds about a peer goes once the peer is neither
// connected nor banned: a connected peer keeps its charges, a banned one
// its ban and charges until the ban ends, and then both go.
func TestPruneForgetsGonePeers(t *testing.T) {
	y := &Syncer{charges: map[peer.ID]int{}, banned: map[peer.ID]time.Time{}, proofsFrom: map[peer.ID]uint64{}}
	now := time.Unix(1_800_000_000, 0)
	on, off, bannedOff := peer.ID("on"), peer.ID("off"), peer.ID("banned")
	for _, p := range []peer.ID{on, off, bannedOff} {
		y.charges[p], y.proofsFrom[p] = 1, 7
	}
	y.banned[bannedOff] = now.Add(time.Minute)
	connected := func(p peer.ID) bool { return p == on }
	y.prune(now, connected)
	if _, ok := y.charges[off]; ok || y.proofsFrom[off] != 0 {
		t.Fatal("kept a gone peer")
	}
	if y.charges[on] != 1 || y.proofsFrom[on] != 7 || y.charges[bannedOff] != 1 {
		t.Fatal("forgot a connected or banned peer")
	}
	y.prune(now.Add(time.Minute), connected)
	if len(y.charges) != 1 || len(y.banned) != 0 || len(y.proofsFrom) != 1 {
		t.Fatalf("after the ban: charges %v, banned %v, proofs %v", y.charges, y.banned, y.proofsFrom)
	}
}
