package api

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// BenchmarkWeightsHistory: the dashboard's weights chart replays every
// stored epoch record (3 validators weighing 50 miners per epoch).
func BenchmarkWeightsHistory(b *testing.B) {
	for _, epochs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("epochs=%d", epochs), func(b *testing.B) {
			st := historyStore(b, epochs, 3, 50)
			h := New(Options{Store: st})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if code, _ := get(b, h, "/api/v1/weights/history?last=30"); code != http.StatusOK {
					b.Fatal(code)
				}
			}
		})
	}
}

func historyStore(b *testing.B, epochs, validators, miners int) *store.Store {
	st, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	var ms []peer.ID
	for i := 0; i < miners; i++ {
		_, id := nodetest.Key(b)
		ms = append(ms, id)
	}
	sort.Slice(ms, func(i, j int) bool { return bytes.Compare([]byte(ms[i]), []byte(ms[j])) < 0 })
	for v := 0; v < validators; v++ {
		key, id := nodetest.Key(b)
		for e := 0; e < epochs; e++ {
			rec := &pb.EpochRecord{Version: protocol.Version, Epoch: uint64(e),
				RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)}
			for j, m := range ms {
				rec.Weights = append(rec.Weights, &pb.MinerWeight{Miner: []byte(m), Weight: float64(j+v+e%7+1) / float64(miners*(miners+20))})
			}
			raw, err := protocol.Seal(key, rec)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.PutEpochRecord(uint64(e), []byte(id), raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st
}
