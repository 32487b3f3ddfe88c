package recordsync

import (
	"slices"
	"testing"

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
