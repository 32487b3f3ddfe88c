package validator

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"lukechampine.com/blake3"
)

// Admission (SPEC.md §16). A validator schedules at most
// validator.max_miners miners at once: the others get no slots, so no
// rounds, no no-shows and no place in its epoch record. Which miners it
// schedules is a deterministic order that a swarm of identities that
// announce and never compute cannot climb: miners weighed in the
// validator's latest record come first (by weight), then miners it
// verified in this epoch or the last, then miners connected to it, then
// the rest; within each tier, identities first seen before this epoch
// come before fresh ones, and ties go by a hash seeded with the
// validator's latest record ID, which no identity knew when it announced.

// Candidate is what admission ranks a miner by.
type Candidate struct {
	ID        peer.ID
	Weight    float64 // in the validator's latest record
	Verified  bool    // a verified round with the validator in this epoch or the last
	Connected bool
	Fresh     bool     // first seen in this epoch
	Rank      [32]byte // AdmissionRank
}

// tier is a candidate's place class: lower comes first.
func (c *Candidate) tier() int {
	switch {
	case c.Weight > 0:
		return 0
	case c.Verified:
		return 1
	case c.Connected:
		return 2
	}
	return 3
}

// AdmissionRank is the seeded hash that orders miners within a tier.
func AdmissionRank(seed [32]byte, miner peer.ID) [32]byte {
	var out [32]byte
	blake3.DeriveKey(out[:], "pog 2026-12-02 admission rank v1", append(seed[:], miner...))
	return out
}

// Admit is the set of at most limit candidates admitted, in the order
// above; all of them if they fit.
func Admit(limit int, cands []Candidate) map[peer.ID]bool {
	out := make(map[peer.ID]bool, min(limit, len(cands)))
	if len(cands) > limit {
		slices.SortFunc(cands, compareCandidates)
		cands = cands[:limit]
	}
	for _, c := range cands {
		out[c.ID] = true
	}
	return out
}

func compareCandidates(a, b Candidate) int {
	if n := cmp.Compare(a.tier(), b.tier()); n != 0 {
		return n
	}
	if n := cmp.Compare(b.Weight, a.Weight); n != 0 {
		return n
	}
	if a.Fresh != b.Fresh {
		if a.Fresh {
			return 1
		}
		return -1
	}
	if n := bytes.Compare(a.Rank[:], b.Rank[:]); n != 0 {
		return n
	}
	return cmp.Compare(a.ID, b.ID)
}

// admitEvery is how often admission is recomputed while there are more
// miners than it admits: ranking thousands of identities at every tick
// would cost more than the slots it decides, and a miner that connects
// or is verified waits at most this long for its place.
const admitEvery = time.Second

// admit recomputes which miners are scheduled (v.admitted; nil: all, as
// long as they fit). v.mu must be held.
func (v *Validator) admit(now time.Time) {
	limit := v.env.Config.Validator.MaxMiners
	if limit <= 0 || len(v.miners) <= limit {
		v.admitted = nil
		return
	}
	if v.admitted != nil && now.Sub(v.admittedAt) < admitEvery {
		return
	}
	v.admittedAt = now
	ep := v.env.EpochAt(now)
	cands := make([]Candidate, 0, len(v.miners))
	for p, e := range v.miners {
		if !e.ranked || e.rankSeed != v.admitSeed {
			e.rank, e.rankSeed, e.ranked = AdmissionRank(v.admitSeed, p), v.admitSeed, true
		}
		cands = append(cands, Candidate{ID: p, Weight: v.weights[p], Verified: e.verified >= max(ep, 1),
			Connected: v.env.Host.Network().Connectedness(p) == network.Connected, Fresh: e.firstEpoch >= ep, Rank: e.rank})
	}
	v.admitted = Admit(limit, cands)
}

// setLatestRecord makes raw, this validator's newest record, the one
// admission ranks by.
func (v *Validator) setLatestRecord(raw []byte) {
	o, err := protocol.Decode(raw, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		return
	}
	ws := map[peer.ID]float64{}
	for _, w := range o.Msg.(*pb.EpochRecord).Weights {
		ws[peer.ID(w.Miner)] = w.Weight
	}
	v.mu.Lock()
	v.weights, v.admitSeed = ws, protocol.ID(o.Body)
	v.mu.Unlock()
}

// latestRecordEpochs is how far back Start looks for the validator's
// latest record: past the finality depth, records no longer count.
const latestRecordEpochs = 16

// loadLatestRecord finds this validator's latest stored record before
// epoch e, for a restarted validator's admission.
func (v *Validator) loadLatestRecord(e uint64) error {
	var latest []byte
	for ent, err := range v.store.EpochRecords(e-min(e, latestRecordEpochs), e) {
		if err != nil {
			return err
		}
		if peer.ID(ent.Validator) == v.id() {
			latest = ent.Envelope
		}
	}
	if latest != nil {
		v.setLatestRecord(latest)
	}
	return nil
}
