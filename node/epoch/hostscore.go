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

// ProvenHost is a miner's proven host of one epoch from one validator's
// host records: for each kind the mean over its records of that kind, a
// failed, missed or no-show one counting 0 (SPEC §23.8), the kinds summed.
// Identities that share a host are measured in the same host slots, so
// their means sum to at most what the host proved in each.
func ProvenHost(hosts []*store.HostRecord) scoring.Hardware {
	var sum [hostround.KindPlot + 1]scoring.HostMeasurement
	var n, chains [hostround.KindPlot + 1]int
	for _, r := range hosts {
		ch, err := hostround.DecodeChallenge(r.Challenge)
		if err != nil {
			continue
		}
		k := ch.Proof.Kind()
		n[k]++
		if _, m, ok := HostMeasurement(r); ok {
			sum[k], chains[k] = sum[k].Add(m), max(chains[k], m.CPUChains)
		}
	}
	var all scoring.HostMeasurement
	for k, m := range sum {
		if n[k] > 0 {
			mean := m.Scale(1 / float64(n[k]))
			mean.CPUChains = chains[k] // one CPU's chains, not their sum
			all = all.Add(mean)
		}
	}
	return all.ProvenHost()
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
