package validator

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/store"
)

// TestLastRound: a restarted validator numbers above its own highest
// round of epochs e−1 to e+1, whatever other validators stored.
func TestLastRound(t *testing.T) {
	st := nodetest.MemStore(t)
	self, other := nodetest.Peer(t), nodetest.Peer(t)
	put := func(e, r uint64, v peer.ID) {
		rec := &store.RoundRecord{Epoch: e, Round: r, Miner: []byte("m"), Validator: []byte(v), Challenge: []byte{1},
			Verdict: store.VerdictFailed, Reason: "x"}
		if err := st.PutRound(rec); err != nil {
			t.Fatal(err)
		}
	}
	put(9, 5, self)
	put(10, 41, self)
	put(10, 99, other) // another validator's numbers do not count
	put(12, 500, self) // outside e±1
	for e, want := range map[uint64]uint64{10: 41, 9: 41, 11: 500, 20: 0} {
		if got, err := lastRound(st, self, e); err != nil || got != want {
			t.Errorf("lastRound(epoch %d) = %d, %v; want %d", e, got, err, want)
		}
	}
}
