package epoch

import (
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// RecordWeights is what each validator's stored, verifying record for
// epoch e weighs each miner: miner → validator → weight (peer IDs as
// text). Records that do not verify are left out; consensus rejects them.
func RecordWeights(st *store.Store, e uint64) (map[string]map[string]float64, error) {
	per := map[string]map[string]float64{}
	for ent, err := range st.EpochRecords(e, e) {
		if err != nil {
			return nil, err
		}
		o, err := protocol.Open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			continue
		}
		for _, w := range o.Msg.(*pb.EpochRecord).Weights {
			m := peer.ID(w.Miner).String()
			if per[m] == nil {
				per[m] = map[string]float64{}
			}
			per[m][o.Author.String()] = w.Weight
		}
	}
	return per, nil
}
