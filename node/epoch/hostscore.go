package epoch

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// Host evidence in the epoch score (SPEC §23.8): a verified host record's
// timing, recomputed from the record alone, is the miner's proven CPU, RAM
// or storage.

// HostElapsed is a host record's elapsed time: the root's arrival less the
// round trip, at most 1/hostround.MaxRTTDivisor of the arrival (a miner
// that delays its pings gains at most 1/0.95), as the round's machine
// computed it.
func HostElapsed(r *store.HostRecord) time.Duration {
	return time.Duration(max(r.RootNanos-min(r.RTTNanos, r.RootNanos/hostround.MaxRTTDivisor), 1))
}

// HostMeasurement is what a verified host record credits (hostround.Proof's
// credited over HostElapsed) and its kind. ok is false for a failed record
// or an undecodable challenge.
func HostMeasurement(r *store.HostRecord) (kind byte, m scoring.HostMeasurement, ok bool) {
	if r.Verdict != store.VerdictVerified {
		return 0, m, false
	}
	ch, err := hostround.DecodeChallenge(r.Challenge)
	if err != nil {
		return 0, m, false
	}
	return ch.Proof.Kind(), ch.Proof.Credited(HostElapsed(r)), true
}

// ProvenHost is a miner's proven host of one epoch: for each kind the best
// of its verified host records (one CPU measured several times is not
// several CPUs), the kinds summed.
func ProvenHost(hosts []*store.HostRecord) scoring.Hardware {
	var best [hostround.KindPlot + 1]scoring.HostMeasurement
	for _, r := range hosts {
		if k, m, ok := HostMeasurement(r); ok && hostRank(m) > hostRank(best[k]) {
			best[k] = m
		}
	}
	var sum scoring.HostMeasurement
	for _, m := range best {
		sum = sum.Add(m)
	}
	return sum.ProvenHost()
}

// hostRank orders one kind's measurements: each kind fills only its own
// fields, the CPU's rate, the dataset's or the plot's credited bytes.
func hostRank(m scoring.HostMeasurement) float64 {
	return m.CPUStepsPerSecond + m.RAMBytes + m.StorageBytes
}

// hostsByMiner is validator v's host records of epoch e, by miner, in store
// order.
func hostsByMiner(st *store.Store, v peer.ID, e uint64) (map[peer.ID][]*store.HostRecord, []*store.HostRecord, error) {
	by := map[peer.ID][]*store.HostRecord{}
	var all []*store.HostRecord
	for r, err := range st.HostRounds(e, e) {
		if err != nil {
			return nil, nil, err
		}
		if peer.ID(r.Validator) == v {
			by[peer.ID(r.Miner)] = append(by[peer.ID(r.Miner)], r)
			all = append(all, r)
		}
	}
	return by, all, nil
}
