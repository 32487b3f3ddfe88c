package node

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// AuditOptions configure Audit.
type AuditOptions struct {
	// Epoch, if set, limits recomputation to one epoch (the record chain is
	// still checked from the start).
	Epoch *uint64
	// Since, if set, makes the audit incremental: records, rounds and
	// proofs of earlier epochs are taken as audited before (their
	// signatures are not re-checked, their weights not recomputed; the
	// scorer resumes from its checkpoint), though hash chains and consensus
	// still run from the first epoch.
	Since     *uint64
	Scoring   scoring.Config
	Consensus consensus.Params
	Stakes    map[string]float64 // nil: equal stakes
	// Local lists the validators whose round evidence this store holds (a
	// validator's home: itself); nil means find them by scanning.
	Local []peer.ID
	// EvidenceFrom, by validator, replaces the store's bound for that
	// validator's evidence: a public audit's store holds several
	// validators' evidence, each pruned at the validator's own bound.
	EvidenceFrom map[peer.ID]uint64
}

// AuditReport is what an audit checked; Problems is empty when everything
// matched, and otherwise lists each failure, the first bad record first.
type AuditReport struct {
	EpochRecords   int `json:"epoch_records"`
	Recomputed     int `json:"recomputed_records"`
	Rounds         int `json:"rounds"`
	HostRounds     int `json:"host_rounds"`
	ProofsVerified int `json:"proofs_verified"`
	Equivocations  int `json:"equivocation_proofs"`
	// Pruned counts this node's records whose round evidence was pruned
	// (SPEC.md §21): signature and chain checked, weights not recomputed.
	Pruned int `json:"pruned_records"`
	// EvidenceFrom is the first epoch whose round evidence the store keeps.
	EvidenceFrom    uint64            `json:"evidence_from"`
	ConsensusHashes map[uint64]string `json:"consensus_hashes"` // hex Result.Hash by epoch
	Problems        []string          `json:"problems"`
}

// Audit checks a store end to end: every epoch record's signature and its
// validator's hash chain; every round record's signed challenge and
// commitment, its sample and its tile inclusion proofs; recomputes the
// weights of every record whose round evidence is in this store; and
// recomputes each epoch's consensus.
func Audit(st *store.Store, opts AuditOptions) (*AuditReport, error) {
	rep := &AuditReport{ConsensusHashes: map[uint64]string{}}
	bad := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	since := uint64(0)
	if opts.Since != nil {
		since = *opts.Since
	}
	want := func(e uint64) bool { return (opts.Epoch == nil || *opts.Epoch == e) && e >= since }
	last := ^uint64(0)
	if opts.Epoch != nil {
		last = *opts.Epoch
	}
	evidenceFrom, err := st.EvidenceFrom()
	if err != nil {
		bad("evidence bound: %v", err)
		return rep, nil
	}
	rep.EvidenceFrom = evidenceFrom
	// Weights are recomputed from the first epoch with evidence that this
	// audit covers (bounds: of each validator); the scorer resumes from the
	// checkpoint before it.
	bounds := func(v peer.ID) (from, start uint64) {
		from = evidenceFrom
		if b, ok := opts.EvidenceFrom[v]; ok {
			from = b
		}
		return from, max(since, from)
	}
	links, err := auditEquivocations(st, since, last, want, rep, bad)
	if err != nil {
		return rep, nil
	}

	local := map[peer.ID]bool{}
	for _, v := range opts.Local {
		local[v] = true
	}
	if opts.Local == nil {
		for r, err := range st.Rounds(0, last) {
			if err != nil {
				bad("round records: %v", err)
				return rep, nil
			}
			local[peer.ID(r.Validator)] = true
		}
	}
	type coverKey struct {
		v peer.ID
		e uint64
	}
	covered := map[coverKey]bool{}

	prev := map[peer.ID][][32]byte{} // IDs the next record may link to
	lastEpoch := map[peer.ID]uint64{}
	scorers := map[peer.ID]*EpochScorer{}
	skipped := map[peer.ID]bool{} // local validators with records before start
	epochs := []uint64{}
	for ent, err := range st.EpochRecords(0, last) {
		if err != nil {
			bad("epoch records: %v", err)
			return rep, nil
		}
		rep.EpochRecords++
		v := peer.ID(ent.Validator)
		open := protocol.Open
		if ent.Epoch < since {
			open = protocol.Decode
		}
		o, err := open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			bad("epoch record %d of %s: %v", ent.Epoch, v, err)
			continue
		}
		rec := o.Msg.(*pb.EpochRecord)
		switch {
		case o.Author != v:
			bad("epoch record %d stored under %s is signed by %s", ent.Epoch, v, o.Author)
			continue
		case rec.Epoch != ent.Epoch:
			bad("epoch record stored as epoch %d says epoch %d", ent.Epoch, rec.Epoch)
			continue
		}
		// Another validator's chain may start after its first record: this
		// node may have joined later. From the first record held on, and for
		// the node's own validators from the start, links must match.
		if p, held := prev[v]; held || local[v] {
			if !held {
				p = [][32]byte{{}}
			}
			// After a proven equivocation since the record held before,
			// the chain may continue from either record of the proof (this
			// node may hold neither: it ignores both once it has the proof).
			p = append(p, links.since(v, lastEpoch[v], held, ent.Epoch)...)
			if !slices.Contains(p, [32]byte(rec.PrevRecordHash)) {
				bad("epoch record %d of %s: hash chain broken (a record before it was deleted, altered or reordered)", ent.Epoch, v)
			}
		}
		prev[v], lastEpoch[v] = [][32]byte{protocol.ID(o.Body)}, ent.Epoch
		if len(epochs) == 0 || epochs[len(epochs)-1] != ent.Epoch {
			epochs = append(epochs, ent.Epoch)
		}
		if !local[v] {
			continue
		}
		from, start := bounds(v)
		if ent.Epoch < start {
			if ent.Epoch < from && want(ent.Epoch) {
				rep.Pruned++
			}
			skipped[v] = true
			continue
		}
		s := scorers[v]
		if s == nil {
			// A scorer that skipped records resumes from its checkpoint.
			s = &EpochScorer{Store: st, Validator: v, Config: opts.Scoring, Resume: skipped[v]}
			scorers[v] = s
			if msg := checkResume(st, v, start, from); skipped[v] && msg != "" {
				bad("%s", msg)
			}
		}
		again, _, err := s.Close(ent.Epoch)
		if err != nil {
			bad("epoch record %d of %s: recomputing: %v", ent.Epoch, v, err)
			continue
		}
		if msg := checkCheckpoint(st, v, ent.Epoch, s); msg != "" {
			bad("%s", msg)
		}
		if !want(ent.Epoch) {
			continue
		}
		rep.Recomputed++
		switch {
		case !bytes.Equal(again.ScoringConfigHash, rec.ScoringConfigHash):
			bad("epoch record %d of %s: scored with another scoring configuration", ent.Epoch, v)
		case !bytes.Equal(again.RoundsRoot, rec.RoundsRoot):
			bad("epoch record %d of %s: round evidence differs from what the record commits to (a round record was added, deleted or altered)", ent.Epoch, v)
		case !sameWeights(again.Weights, rec.Weights):
			bad("epoch record %d of %s: weights differ from those recomputed from the evidence", ent.Epoch, v)
		default:
			covered[coverKey{v, ent.Epoch}] = true
		}
	}
	// Round evidence, on every core: signatures dominate the cost. A round
	// covered by a record whose rounds_root matched is already authenticated
	// by the validator's signature on that record, so only the miner's
	// commitment signature is checked again. Problems are sorted by key so
	// the first one named does not depend on scheduling.
	type job struct {
		key []byte
		r   *store.RoundRecord
	}
	type finding struct {
		key []byte
		msg string
	}
	jobs := make(chan job, 256)
	var mu sync.Mutex
	var findings []finding
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				n, err := auditRound(j.r, covered[coverKey{peer.ID(j.r.Validator), j.r.Epoch}])
				mu.Lock()
				rep.ProofsVerified += n
				if err != nil {
					findings = append(findings, finding{j.key, fmt.Sprintf("round record epoch %d round %d miner %s: %v", j.r.Epoch, j.r.Round, peer.ID(j.r.Miner), err)})
				}
				mu.Unlock()
			}
		}()
	}
	var scanErr error
	for r, err := range st.Rounds(since, last) {
		if err != nil {
			scanErr = err
			break
		}
		if want(r.Epoch) {
			rep.Rounds++
			jobs <- job{store.RoundKey(r.Epoch, r.Round, r.Miner), r}
		}
	}
	close(jobs)
	wg.Wait()
	if scanErr != nil {
		bad("round records: %v", scanErr)
		return rep, nil
	}
	slices.SortFunc(findings, func(a, b finding) int { return bytes.Compare(a.key, b.key) })
	for _, f := range findings {
		bad("%s", f.msg)
	}
	var hostProblems []string
	rep.HostRounds, hostProblems = auditHosts(st, since, last, want)
	rep.Problems = append(rep.Problems, hostProblems...)

	if len(epochs) > 0 {
		err := consensusEpochs(st, epochs[len(epochs)-1], opts.Stakes, opts.Consensus, since, func(e uint64, r *consensus.Result) error {
			if want(e) {
				h := r.Hash()
				rep.ConsensusHashes[e] = hex.EncodeToString(h[:])
			}
			return nil
		})
		if err != nil {
			bad("consensus: %v", err)
		}
	}
	return rep, nil
}

func sameWeights(a, b []*pb.MinerWeight) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.MinerWeight) bool {
		return bytes.Equal(x.Miner, y.Miner) && x.Weight == y.Weight
	})
}

// auditRound re-checks one round record's signed evidence and stated work;
// for a verified round its sample, timing and inclusion proofs, and for a
// failed one that its evidence shows a failure (auditFailed). covered skips the
// challenge's signature (see Audit). It returns how many proofs it
// verified.
func auditRound(r *store.RoundRecord, covered bool) (int, error) {
	open := protocol.Open
	if covered {
		open = protocol.Decode
	}
	co, err := open(r.Challenge, pb.MessageType_CHALLENGE)
	if err != nil {
		return 0, fmt.Errorf("challenge: %w", err)
	}
	ch := co.Msg.(*pb.Challenge)
	switch {
	case co.Author != peer.ID(r.Validator):
		return 0, fmt.Errorf("challenge signed by %s, not the validator", co.Author)
	case peer.ID(ch.Miner) != peer.ID(r.Miner) || ch.Epoch != r.Epoch || ch.Round != r.Round:
		return 0, fmt.Errorf("challenge is for another miner, epoch or round")
	}
	params, err := protocol.ChallengeParams(ch)
	if err != nil {
		return 0, fmt.Errorf("challenge: %w", err)
	}
	chain := proof.Chain{ID: protocol.ID(co.Body), Template: params, Steps: int(ch.Steps)}
	if err := chain.Validate(); err != nil {
		return 0, fmt.Errorf("challenge: %w", err)
	}
	if err := auditFLOPs(r, chain); err != nil {
		return 0, err
	}
	if r.Verdict != store.VerdictVerified {
		return auditFailed(r, ch, chain)
	}
	roots, err := openCommitment(r, chain)
	if err != nil {
		return 0, err
	}
	idx, err := chain.Sample(r.Secret, [32]byte(ch.SecretCommitment), roots, int(ch.Samples))
	if err != nil {
		return 0, err
	}
	if !slices.Equal(idx, r.Indices) {
		return 0, fmt.Errorf("sampled indices do not follow from the secret and roots")
	}
	if err := auditTiming(r, chain, time.Duration(ch.MinTimedMs)*time.Millisecond); err != nil {
		return 0, err
	}
	if err := auditBounds(r, ch); err != nil {
		return 0, err
	}
	groups := chain.Groups(idx)
	if len(r.Proofs) != len(groups) || len(r.Leaves) != len(idx) {
		return 0, fmt.Errorf("verified with %d proofs and %d leaves for %d sampled groups and %d tiles", len(r.Proofs), len(r.Leaves), len(groups), len(idx))
	}
	for i, g := range groups {
		if err := verifyGroup(r, roots, chain, g, i); err != nil {
			return i, err
		}
	}
	return len(groups), nil
}

// auditTiming recomputes a verified round's throughput from its recorded
// root arrivals and the challenge's min_timed (SPEC.md §10).
func auditTiming(r *store.RoundRecord, chain proof.Chain, minTimed time.Duration) error {
	if len(r.StepArrivals) != chain.Steps {
		return fmt.Errorf("%d step arrivals for %d steps", len(r.StepArrivals), chain.Steps)
	}
	sustained, peak := round.Throughput(stepArrivals(r), round.StepFLOPs(chain), round.PeakWindow, minTimed)
	if sustained != r.TFLOPS || peak != r.PeakTFLOPS {
		return fmt.Errorf("throughput %v (peak %v) does not follow from the root arrivals: %v (peak %v)", r.TFLOPS, r.PeakTFLOPS, sustained, peak)
	}
	return nil
}
