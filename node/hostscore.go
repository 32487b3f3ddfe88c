package node

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"lukechampine.com/blake3"
)

// Host evidence in the epoch score (SPEC §23.8): a verified host record's
// timing, recomputed from the record alone, is the miner's proven CPU.

const evidenceRootContext = "pog 2026-12-01 epoch evidence root v2"

// EvidenceRoot is an epoch record's rounds_root: RoundsRoot when the epoch
// has no host records (so records without them keep their bytes), else
// BLAKE3 derive-key over the BLAKE3 hashes of each round record's and then
// each host record's canonical encoding, in store order.
func EvidenceRoot(rounds []*store.RoundRecord, hosts []*store.HostRecord) [32]byte {
	if len(hosts) == 0 {
		return RoundsRoot(rounds)
	}
	cat := make([]byte, 32*(len(rounds)+len(hosts)))
	parallelFor(len(rounds), func(i int) {
		h := blake3.Sum256(store.EncodeRound(rounds[i]))
		copy(cat[32*i:], h[:])
	})
	for i, r := range hosts {
		h := blake3.Sum256(store.EncodeHost(r))
		copy(cat[32*(len(rounds)+i):], h[:])
	}
	var root [32]byte
	blake3.DeriveKey(root[:], evidenceRootContext, cat)
	return root
}

// maxRTTShare bounds the round trip subtracted from a host root's arrival
// to this share of it (§23.1 sizes rounds to last 20 round trips): a miner
// that delays its pings gains at most 1/(1 − maxRTTShare) ≈ 5 %.
const maxRTTShare = 0.05

// hostElapsed is a host record's elapsed time: the root's arrival less the
// round trip, at most maxRTTShare of the arrival.
func hostElapsed(r *store.HostRecord) time.Duration {
	return time.Duration(max(r.RootNanos-min(r.RTTNanos, int64(maxRTTShare*float64(r.RootNanos))), 1))
}

// hostMeasurement is what a verified CPU host record credits: its chains,
// and its chain steps per second over hostElapsed times the proof's credit.
// ok is false for a failed record or an undecodable challenge.
func hostMeasurement(r *store.HostRecord) (m scoring.HostMeasurement, ok bool) {
	if r.Verdict != store.VerdictVerified {
		return m, false
	}
	ch, err := decodeHostChallenge(r.Challenge)
	if err != nil {
		return m, false
	}
	t := host.Timing{Shape: ch.CPU.Shape, Elapsed: hostElapsed(r)}
	m.CPUChains = int(ch.CPU.Chains)
	m.CPUStepsPerSecond = t.StepsPerSecond() * t.Credit(cpuwork.StepBoundNs)
	return m, true
}

// provenHost is a miner's proven host of one epoch: the best of its
// verified host records (one CPU measured several times is not several
// CPUs).
func provenHost(hosts []*store.HostRecord) scoring.Hardware {
	var best scoring.HostMeasurement
	for _, r := range hosts {
		if m, ok := hostMeasurement(r); ok && m.CPUStepsPerSecond > best.CPUStepsPerSecond {
			best = m
		}
	}
	return best.ProvenHost()
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
