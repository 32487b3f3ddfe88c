package epoch

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/internal/par"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// Epoch evidence: everything here is a function of the store's contents, so
// `pog audit` recomputes exactly what a validator published.

// scoringInput turns one miner's stored rounds and announce into scoring
// input. Throughput comes only from verified rounds the validator timed.
// Envelopes are decoded without re-checking signatures: they were checked
// when stored, and Audit re-checks them separately.
func scoringInput(miner peer.ID, rounds []*store.RoundRecord, announce []byte, penalty float64) scoring.Input {
	in := scoring.Input{Miner: miner.String(), Penalty: penalty}
	for _, r := range rounds {
		sr := scoring.Round{Verified: r.Verdict == store.VerdictVerified, Missed: MissedRound(r), TFLOPS: r.TFLOPS}
		if ch, ps, err := protocol.PeekChallenge(r.Challenge); err == nil {
			sr.Precision, sr.Probe = scoring.Precision(ps[0].Precision), ch.Probe
			for _, p := range ps {
				sr.ProvenMemoryBytes += workingSet(p)
			}
		}
		in.Rounds = append(in.Rounds, sr)
	}
	if o, err := protocol.Decode(announce, pb.MessageType_MINER_ANNOUNCE); err == nil && o.Author == miner {
		a := o.Msg.(*pb.MinerAnnounce)
		for _, g := range a.Gpus {
			in.Hardware.GPUNames = append(in.Hardware.GPUNames, g.Name)
		}
		if h := a.Hardware; h != nil {
			in.Hardware.CPUCores, in.Hardware.CPUGHz = int(h.CpuCores), h.CpuGhz
			in.Hardware.RAMBytes, in.Hardware.RAMGBps = h.RamBytes, h.RamGbps
			in.Hardware.StorageBytes, in.Hardware.StorageMBps = h.StorageBytes, h.StorageMbps
		}
	}
	return in
}

// workingSet is the device memory a challenge needs: A and B in the input
// format (2 bytes for fp16, 4 for fp32) and C as int32.
func workingSet(p proof.Params) uint64 {
	in := uint64(4)
	if p.Precision == proof.FP16 {
		in = 2
	}
	b, m, k, n := uint64(p.Batch), uint64(p.M), uint64(p.K), uint64(p.N)
	return b * (in*(m*k+k*n) + 4*m*n)
}

// Scorer computes a validator's epoch records from its store, carrying
// miners' penalties from epoch to epoch.
type Scorer struct {
	Store     *store.Store
	Validator peer.ID
	Config    scoring.Config
	// Resume starts from the latest stored checkpoint below the first epoch
	// closed instead of replaying from the first epoch (checkpoint.go).
	Resume bool
	// Checkpoint stores a checkpoint after each closed epoch.
	Checkpoint bool
	// Scored, if set, sees the scores of each epoch Close closes (the
	// node's metrics).
	Scored func(e uint64, scores []scoring.Score)

	last      uint64 // epochs below last+1 have been folded into penalties
	started   bool
	penalties map[string]float64
	// inspect, if set, sees each scored epoch's inputs and each miner's
	// rounds before they are scored (ExplainEpoch).
	inspect func(e uint64, ins []scoring.Input, rounds [][]*store.RoundRecord)
}

// Close scores epoch e and returns the record to sign, with the scores.
// Epochs must be closed in increasing order. Earlier epochs holding this
// validator's evidence are scored first, so penalties carry over exactly as
// an auditor replaying the store computes them; epochs without evidence are
// skipped (penalties decay per scored epoch).
func (s *Scorer) Close(e uint64) (*pb.EpochRecord, []scoring.Score, error) {
	if s.penalties == nil {
		s.penalties = map[string]float64{}
	}
	if err := s.resume(e); err != nil {
		return nil, nil, err
	}
	from := uint64(0)
	if s.started {
		if e <= s.last {
			return nil, nil, fmt.Errorf("epoch %d already closed (last %d)", e, s.last)
		}
		from = s.last + 1
	}
	// Stream this validator's rounds epoch by epoch, scoring each epoch
	// with evidence as it ends, then e itself (which may have none).
	var rec *pb.EpochRecord
	var scores []scoring.Score
	var batch []*store.RoundRecord
	batchEpoch := uint64(0)
	flush := func() error {
		var err error
		rec, scores, err = s.score(batchEpoch, batch)
		batch = batch[:0]
		return err
	}
	for r, err := range s.Store.Rounds(from, e) {
		if err != nil {
			return nil, nil, err
		}
		if peer.ID(r.Validator) != s.Validator {
			continue
		}
		if len(batch) > 0 && r.Epoch != batchEpoch {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
		batchEpoch = r.Epoch
		batch = append(batch, r)
	}
	if len(batch) > 0 && batchEpoch == e {
		if err := flush(); err != nil {
			return nil, nil, err
		}
	} else {
		if len(batch) > 0 {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
		batchEpoch = e
		if err := flush(); err != nil {
			return nil, nil, err
		}
	}
	// The previous record is normally the one at the last closed epoch:
	// search from there, and from the start only if it is missing.
	var prev [32]byte
	var found bool
	var err error
	if s.started {
		prev, found, err = prevRecordID(s.Store, s.Validator, s.last, e)
	}
	if err == nil && !found {
		prev, _, err = prevRecordID(s.Store, s.Validator, 0, e)
	}
	if err != nil {
		return nil, nil, err
	}
	s.last, s.started = e, true
	rec.PrevRecordHash = prev[:]
	if err := s.checkpoint(e); err != nil {
		return nil, nil, err
	}
	if s.Scored != nil {
		s.Scored(e, scores)
	}
	return rec, scores, nil
}

// score scores one epoch from the validator's rounds of it and updates
// the carried penalties.
func (s *Scorer) score(e uint64, rounds []*store.RoundRecord) (*pb.EpochRecord, []scoring.Score, error) {
	ins, recs, allHosts, err := s.inputs(e, rounds)
	if err != nil {
		return nil, nil, err
	}
	if s.inspect != nil {
		s.inspect(e, ins, recs)
	}
	scores := make([]scoring.Score, len(ins))
	par.For(len(ins), func(i int) { scores[i] = scoring.ScoreMiner(s.Config, ins[i]) })
	for _, sc := range scores {
		s.penalties[sc.Miner] = sc.Penalty
	}
	hash := s.Config.Hash()
	root := record.EvidenceRoot(rounds, allHosts)
	rec := &pb.EpochRecord{Version: protocol.Version, Epoch: e, RoundsRoot: root[:], ScoringConfigHash: hash[:], PrevRecordHash: make([]byte, 32)}
	for _, w := range scoring.Weights(scores) {
		id, err := peer.Decode(w.Miner)
		if err != nil {
			return nil, nil, err
		}
		rec.Weights = append(rec.Weights, &pb.MinerWeight{Miner: []byte(id), Weight: w.Value})
	}
	rec.Weights = boundWeights(rec.Weights)
	return rec, scores, nil
}

// boundWeights keeps at most protocol.MaxEpochMiners weights, the highest
// (ties to the lower miner ID), in miner order, so that a record of an
// epoch in which more miners were scored than a record may hold still
// verifies. Admission (validator.max_miners) keeps the scored miners
// below the bound; what is dropped is the least weighed, zeros first.
func boundWeights(ws []*pb.MinerWeight) []*pb.MinerWeight {
	byMiner := func(a, b *pb.MinerWeight) int { return bytes.Compare(a.Miner, b.Miner) }
	if len(ws) > protocol.MaxEpochMiners {
		slices.SortStableFunc(ws, byMiner)
		slices.SortStableFunc(ws, func(a, b *pb.MinerWeight) int { return cmp.Compare(b.Weight, a.Weight) })
		ws = ws[:protocol.MaxEpochMiners]
	}
	slices.SortFunc(ws, byMiner)
	return ws
}

// inputs are the scoring inputs of epoch e, sorted by miner: every miner
// with rounds in it, and every miner still carrying a penalty; with each
// one's rounds (in the order of its input's) and all the epoch's host
// records.
func (s *Scorer) inputs(e uint64, rounds []*store.RoundRecord) ([]scoring.Input, [][]*store.RoundRecord, []*store.HostRecord, error) {
	byMiner := map[peer.ID][]*store.RoundRecord{}
	for _, r := range rounds {
		byMiner[peer.ID(r.Miner)] = append(byMiner[peer.ID(r.Miner)], r)
	}
	// Miners penalised earlier stay in the computation until it decays.
	for m, p := range s.penalties {
		if id, err := peer.Decode(m); err == nil && p > 0 && byMiner[id] == nil {
			byMiner[id] = nil
		}
	}
	miners := make([]peer.ID, 0, len(byMiner))
	for m := range byMiner {
		miners = append(miners, m)
	}
	sort.Slice(miners, func(i, j int) bool { return miners[i] < miners[j] })
	hosts, allHosts, err := hostsByMiner(s.Store, s.Validator, e)
	if err != nil {
		return nil, nil, nil, err
	}
	// Each miner's input is independent (penalties are read here and
	// written after scoring), so they are built on every core.
	ins := make([]scoring.Input, len(miners))
	recs := make([][]*store.RoundRecord, len(miners))
	errs := make([]error, len(miners))
	par.For(len(miners), func(i int) {
		m := miners[i]
		ann, err := s.Store.Announce(e, []byte(m))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			errs[i] = err
			return
		}
		ins[i] = scoringInput(m, byMiner[m], ann, s.penalties[m.String()])
		ins[i].ProvenHost = ProvenHost(hosts[m])
		recs[i] = byMiner[m]
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, nil, err
	}
	return ins, recs, allHosts, nil
}

// prevRecordID is the ID of v's latest stored record in epochs [from, e),
// and whether there is one (zero if none).
func prevRecordID(st *store.Store, v peer.ID, from, e uint64) ([32]byte, bool, error) {
	var id [32]byte
	found := false
	if e == 0 || from >= e {
		return id, false, nil
	}
	for ent, err := range st.EpochRecords(from, e-1) {
		if err != nil {
			return id, false, err
		}
		if peer.ID(ent.Validator) != v {
			continue
		}
		o, err := protocol.Decode(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			return id, false, fmt.Errorf("stored epoch record %d of %s: %w", ent.Epoch, v, err)
		}
		id, found = protocol.ID(o.Body), true
	}
	return id, found, nil
}

// Consensus computes epoch e's consensus from every stored epoch record up
// to e, carrying bonds; stakes maps validator peer IDs to stake (nil: equal
// stakes for every validator that has published).
func Consensus(st *store.Store, e uint64, stakes map[string]float64, p consensus.Params) (*consensus.Result, error) {
	var res *consensus.Result
	err := ConsensusEpochs(st, e, stakes, p, func(ep uint64, r *consensus.Result) error {
		if ep == e {
			res = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("no epoch records for epoch %d", e)
	}
	return res, nil
}

// ConsensusEpochs computes the consensus of every epoch with records up to
// upto in one pass, in epoch order, calling visit with each result. Records
// must verify; a record of a validator outside a genesis set is ignored. A
// final epoch counts only its final set's records (finality.go); a proven
// equivocator's stake counts for nothing in that epoch. Epochs in which no
// record counts are skipped.
func ConsensusEpochs(st *store.Store, upto uint64, stakes map[string]float64, p consensus.Params,
	visit func(uint64, *consensus.Result) error) error {
	return ConsensusEpochsFrom(st, upto, stakes, p, 0, visit)
}

// PriceRow is one miner's rental price from the latest scored epoch.
type PriceRow struct {
	Miner string
	Epoch uint64
	GPUs  int
	Score scoring.Score
	Price float64 // USD per GPU-hour
}

// Pricing scores the latest epoch holding round evidence in st (from the
// validator's latest checkpoint, replaying the epochs after it for
// penalties) and prices each miner's GPU-hour from its
// measured throughput and the demand the utilisation implies.
func Pricing(st *store.Store, c scoring.Config, utilisation float64) ([]PriceRow, error) {
	last, validator, found, err := latestEvidence(st)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("no round evidence in this store (pricing needs a validator's home)")
	}
	s := &Scorer{Store: st, Validator: validator, Config: c, Resume: true}
	_, scores, err := s.Close(last)
	if err != nil {
		return nil, err
	}
	demand := scoring.Demand(c, utilisation)
	var out []PriceRow
	for _, sc := range scores {
		m, err := peer.Decode(sc.Miner)
		if err != nil {
			return nil, err
		}
		gpus := 1
		if ann, err := st.Announce(last, []byte(m)); err == nil {
			if o, err := protocol.Open(ann, pb.MessageType_MINER_ANNOUNCE); err == nil {
				gpus = max(1, len(o.Msg.(*pb.MinerAnnounce).Gpus))
			}
		}
		out = append(out, PriceRow{Miner: sc.Miner, Epoch: last, GPUs: gpus, Score: sc, Price: scoring.Price(c, sc, gpus, demand)})
	}
	return out, nil
}

// latestEvidence is the latest epoch with round evidence in st and the
// validator whose it is, and whether there is one. It prefers the latest
// epoch the validator closed (signed a record for): a later one may be
// partial, its rounds at random times not yet covering every miner.
func latestEvidence(st *store.Store) (uint64, peer.ID, bool, error) {
	var last uint64
	var validator peer.ID
	found, closed := false, false
	for r, err := range st.Rounds(0, ^uint64(0)) {
		if err != nil {
			return 0, "", false, err
		}
		if r.Epoch == last && found { // records iterate by epoch
			continue
		}
		if _, err := st.EpochRecord(r.Epoch, r.Validator); err == nil || !closed {
			last, validator, found, closed = r.Epoch, peer.ID(r.Validator), true, err == nil
		}
	}
	return last, validator, found, nil
}
