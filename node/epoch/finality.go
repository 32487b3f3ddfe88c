package epoch

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Finality (SPEC.md §20). Epoch e is final at the end of epoch e+F. A node
// that is running at that moment writes e's final set: the records it holds
// for e and the validators proven to have equivocated in e. From then on
// e's consensus is computed from that set alone, so records and proofs for
// e that arrive later are stored but change nothing. A node that was not
// running at e's finality time writes no set for e and counts what it holds.

// StartOf is when epoch e starts.
func StartOf(e uint64, length time.Duration) time.Time {
	return time.Unix(0, int64(e)*int64(length))
}

// FinalAt is when epoch e becomes final: the end of epoch e+f.
func FinalAt(e, f uint64, length time.Duration) time.Time {
	return time.Unix(0, int64(e+f+1)*int64(length))
}

// RoundsCutoff is when a validator abandons epoch e's unfinished rounds:
// half the finality window after e ends, so its record for e is signed
// with the other half left to reach every node before e is final.
func RoundsCutoff(e, f uint64, length time.Duration) time.Time {
	return time.Unix(0, int64(e+1)*int64(length)+int64(f)*int64(length)/2)
}

// freezeRule says whether epoch e is final at now, and whether this node,
// running since started, saw its records published (at e's end) and e
// become final, and so must write its final set before storing anything
// more for e. A node that started after e's end cannot tell which of e's
// records came late: it counts all it holds, as one started after e's
// Finality does (a node started at a finality time once froze a set it
// had had no time to sync).
func freezeRule(e, f uint64, length time.Duration, started, now time.Time) (final, freeze bool) {
	final = !now.Before(FinalAt(e, f, length))
	return final, final && !started.After(time.Unix(0, int64(e+1)*int64(length)))
}

// freezeRange is the epochs that ended at or after started and became
// final by now: those a node running since started must have frozen by
// now. ok is false if there are none.
func freezeRange(f uint64, length time.Duration, started, now time.Time) (from, to uint64, ok bool) {
	l := int64(length)
	// (e+1)·l ≥ started ⇔ e ≥ ⌈started/l⌉ − 1; (e+f+1)·l ≤ now ⇔ e ≤ ⌊now/l⌋ − f − 1.
	first := max(0, (started.UnixNano()+l-1)/l-1)
	last := now.UnixNano()/l - int64(f) - 1
	if last < 0 || last < first {
		return 0, 0, false
	}
	return uint64(first), uint64(last), true
}

// finalSetOf is the final set of an epoch with the given stored records
// and proven equivocators: every record of a validator not proven to have
// equivocated counts.
func finalSetOf(records []store.FinalRecord, proven [][]byte) store.FinalSet {
	f := store.FinalSet{Excluded: slices.Clone(proven)}
	slices.SortFunc(f.Excluded, bytes.Compare)
	f.Excluded = slices.CompactFunc(f.Excluded, bytes.Equal)
	for _, r := range records {
		if !f.IsExcluded(r.Validator) {
			f.Included = append(f.Included, r)
		}
	}
	slices.SortFunc(f.Included, func(a, b store.FinalRecord) int { return bytes.Compare(a.Validator, b.Validator) })
	return f
}

// Finality writes final sets and is the only writer of other validators'
// epoch records and of equivocation proofs, so that a late record can never
// be stored before its epoch's final set.
type Finality struct {
	st      *store.Store
	f       uint64
	length  time.Duration
	started time.Time
	mu      sync.Mutex
	next    uint64 // epochs below it are frozen, if they were to be
}

// NewFinality is the finality of a store whose epochs, of the given
// length, are final f epochs after they end, for a node started at started.
func NewFinality(st *store.Store, f uint64, length time.Duration, started time.Time) *Finality {
	return &Finality{st: st, f: f, length: length, started: started}
}

// Tick freezes every epoch that became final since the node started and has
// no final set yet.
func (z *Finality) Tick(now time.Time) error {
	from, to, ok := freezeRange(z.f, z.length, z.started, now)
	if !ok {
		return nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	for e := max(from, z.next); e <= to; e++ {
		if err := z.freeze(e); err != nil {
			return err
		}
		z.next = e + 1
	}
	return nil
}

// before runs before anything is stored for epoch e; z.mu is held.
func (z *Finality) before(e uint64, now time.Time) error {
	if _, freeze := freezeRule(e, z.f, z.length, z.started, now); freeze {
		return z.freeze(e)
	}
	return nil
}

// freeze writes e's final set from what the store holds, unless it has one.
func (z *Finality) freeze(e uint64) error {
	if _, err := z.st.Final(e); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	set, err := heldSet(z.st, e)
	if err != nil {
		return err
	}
	// An epoch with nothing stored freezes as the empty set: records for
	// it that arrive later are late.
	return z.st.PutFinal(e, set)
}

// heldSet is the final set epoch e would freeze as now: every record st
// holds of it, less proven equivocators'.
func heldSet(st *store.Store, e uint64) (store.FinalSet, error) {
	var recs []store.FinalRecord
	for ent, err := range st.EpochRecords(e, e) {
		if err != nil {
			return store.FinalSet{}, err
		}
		o, err := protocol.Decode(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			return store.FinalSet{}, fmt.Errorf("stored epoch record %d of %s: %w", e, peer.ID(ent.Validator), err)
		}
		recs = append(recs, store.FinalRecord{Validator: ent.Validator, ID: protocol.ID(o.Body)})
	}
	var proven [][]byte
	for q, err := range st.Equivocations(e, e) {
		if err != nil {
			return store.FinalSet{}, err
		}
		proven = append(proven, q.Validator)
	}
	return finalSetOf(recs, proven), nil
}

// PutRecord stores a validator's epoch record (Open checked it).
func (z *Finality) PutRecord(now time.Time, e uint64, validator, raw []byte) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := z.before(e, now); err != nil {
		return err
	}
	return z.st.PutEpochRecord(e, validator, raw)
}

// PutProof stores an equivocation proof (CheckEquivocation passed),
// reporting whether it was the first for its key.
func (z *Finality) PutProof(now time.Time, e uint64, validator, proof []byte) (bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := z.before(e, now); err != nil {
		return false, err
	}
	return z.st.PutEquivocation(e, validator, proof)
}

// recordRow is one stored epoch record, decoded for consensus.
type recordRow struct {
	validator []byte
	id        [32]byte
	weights   map[string]float64
}

// selectRecords picks an epoch's records that count. With a final set,
// exactly the records it names count (each must be stored) and its
// excluded validators are the equivocators; without one, every record of a
// validator without a stored proof counts. Rows and the result are in
// validator order.
func selectRecords(rows []recordRow, final *store.FinalSet, proven [][]byte) (counted []recordRow, excluded [][]byte, err error) {
	if final == nil {
		set := finalSetOf(nil, proven)
		for _, r := range rows {
			if !set.IsExcluded(r.validator) {
				counted = append(counted, r)
			}
		}
		return counted, set.Excluded, nil
	}
	for _, r := range rows {
		if final.Counts(r.validator, r.id) {
			counted = append(counted, r)
		}
	}
	if len(counted) != len(final.Included) {
		for _, want := range final.Included {
			if !slices.ContainsFunc(counted, func(r recordRow) bool { return bytes.Equal(r.validator, want.Validator) }) {
				return nil, nil, fmt.Errorf("the final set names record %x of %s, which this store lacks", want.ID[:8], peer.ID(want.Validator))
			}
		}
	}
	return counted, final.Excluded, nil
}

// epochInput is the consensus input of one epoch: the counted rows'
// weights, and stakes with every excluded validator's set to zero. stakes
// nil means equal stakes for every validator counted so far, which equal
// accumulates across epochs.
func epochInput(counted []recordRow, excluded [][]byte, stakes, equal map[string]float64, prevBonds map[string]map[string]float64) consensus.Input {
	in := consensus.Input{Weights: map[string]map[string]float64{}, PrevBonds: prevBonds}
	for _, r := range counted {
		in.Weights[peer.ID(r.validator).String()] = r.weights
	}
	base := stakes
	if base == nil {
		for v := range in.Weights {
			equal[v] = 1
		}
		base = equal
	}
	in.Stakes = make(map[string]float64, len(base)+len(excluded))
	for v, s := range base {
		in.Stakes[v] = s
	}
	for _, v := range excluded {
		if _, known := base[peer.ID(v).String()]; known || stakes == nil {
			in.Stakes[peer.ID(v).String()] = 0
		}
	}
	return in
}

// ConsensusEpochsFrom is ConsensusEpochs; records of epochs below verifyFrom
// are decoded without re-checking their signatures (an incremental audit
// checked them before).
func ConsensusEpochsFrom(st *store.Store, upto uint64, stakes map[string]float64, p consensus.Params, verifyFrom uint64,
	visit func(uint64, *consensus.Result) error) error {
	var prevBonds map[string]map[string]float64
	equal := map[string]float64{}
	var rows []recordRow
	cur, have, visited := uint64(0), false, false
	flush := func() error {
		var final *store.FinalSet
		switch f, err := st.Final(cur); {
		case err == nil:
			final = &f
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		var proven [][]byte
		for q, err := range st.Equivocations(cur, cur) {
			if err != nil {
				return err
			}
			proven = append(proven, q.Validator)
		}
		counted, excluded, err := selectRecords(rows, final, proven)
		rows = nil
		if err != nil {
			return fmt.Errorf("epoch %d: %w", cur, err)
		}
		// A record of a validator outside the genesis set is ignored.
		counted = slices.DeleteFunc(counted, func(r recordRow) bool {
			return stakes != nil && stakes[peer.ID(r.validator).String()] == 0
		})
		if len(counted) == 0 {
			return nil // no record counts: as if the epoch had none
		}
		visited = true
		r, err := consensus.Compute(p, epochInput(counted, excluded, stakes, equal, prevBonds))
		if err != nil {
			return fmt.Errorf("epoch %d: %w", cur, err)
		}
		prevBonds = r.BondsMap()
		return visit(cur, r)
	}
	for ent, err := range st.EpochRecords(0, upto) {
		if err != nil {
			return err
		}
		if have && ent.Epoch != cur {
			if err := flush(); err != nil {
				return err
			}
		}
		cur, have = ent.Epoch, true
		open := protocol.Open
		if ent.Epoch < verifyFrom {
			open = protocol.Decode
		}
		o, err := open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil || !bytes.Equal([]byte(o.Author), ent.Validator) {
			return fmt.Errorf("epoch %d: record of %s does not verify: %v", ent.Epoch, peer.ID(ent.Validator), err)
		}
		row := recordRow{validator: ent.Validator, id: protocol.ID(o.Body), weights: map[string]float64{}}
		for _, w := range o.Msg.(*pb.EpochRecord).Weights {
			row.weights[peer.ID(w.Miner).String()] = w.Weight
		}
		rows = append(rows, row)
	}
	if have {
		if err := flush(); err != nil {
			return err
		}
	}
	if !visited {
		return fmt.Errorf("no epoch records count up to epoch %d", upto)
	}
	return nil
}

// StakeSet is the stake set consensus measures its threshold against: the
// genesis file's, or without one every validator in network.validators with
// stake 1, or nil (equal stakes for every validator that has published:
// local testing only, since nodes holding different records then measure
// against different sets).
func StakeSet(home string, c config.Config) (map[string]float64, error) {
	stakes, err := config.LoadGenesis(home, c)
	if err != nil || stakes != nil || len(c.Network.Validators) == 0 {
		return stakes, err
	}
	stakes = map[string]float64{}
	for _, v := range c.Network.Validators {
		id, err := peer.Decode(v)
		if err != nil {
			return nil, fmt.Errorf("network.validators %q: %w", v, err)
		}
		stakes[id.String()] = 1
	}
	return stakes, nil
}
