package adversary

import "github.com/pog-network/pog/protocol/pb"

// SplitBeacon is the beacon-split validator's second record
// (node.Options.Adversary.EquivocateEpochRecord): for the last epoch of
// each RAM period of period epochs it publishes, at the period boundary
// where its first record went out, a second one (Equivocate's), so that
// nodes hold one or two records of it for that epoch depending on what
// reached them first; other epochs it leaves alone.
func SplitBeacon(period uint64) func(*pb.EpochRecord) {
	return func(rec *pb.EpochRecord) {
		if (rec.Epoch+1)%period == 0 {
			Equivocate(rec)
		}
	}
}
