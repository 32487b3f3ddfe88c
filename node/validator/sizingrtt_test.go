package validator

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestSizingRTT: a round is sized by the least round trip of the miner's
// last rttWindow rounds, so slow pongs now and then do not lengthen its
// steps, while a lasting change counts once the window has passed.
func TestSizingRTT(t *testing.T) {
	const m = peer.ID("miner")
	v := &Validator{miners: map[peer.ID]*minerEntry{m: {}}}
	if got := v.sizingRTT(m, 10*time.Millisecond); got != 10*time.Millisecond {
		t.Fatalf("first round trip sized as %v", got)
	}
	for i := 1; i < rttWindow; i++ {
		if got := v.sizingRTT(m, 2*time.Second); got != 10*time.Millisecond {
			t.Fatalf("slow pong %d sized as %v, want the least, 10ms", i, got)
		}
	}
	if got := v.sizingRTT(m, 2*time.Second); got != 2*time.Second {
		t.Errorf("after %d slow round trips sized as %v, want 2s", rttWindow, got)
	}
	if got := v.sizingRTT(m, 0); got != 0 {
		t.Errorf("a failed ping sized as %v", got)
	}
	if got := v.sizingRTT("other", time.Second); got != time.Second {
		t.Errorf("an unknown miner's round trip sized as %v", got)
	}
}
