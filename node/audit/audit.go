package audit

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// AuditOptions configure Audit.
type Options struct {
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
type Report struct {
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
func Audit(st *store.Store, opts Options) (*Report, error) {
	a := newAuditor(st, opts)
	// Each phase reports what it finds; one that cannot read the store
	// ends the audit with the report so far.
	for _, phase := range []func() bool{a.evidenceBound, a.equivocations, a.localValidators, a.epochRecords, a.rounds} {
		if !phase() {
			return a.rep, nil
		}
	}
	var hostProblems []string
	a.rep.HostRounds, hostProblems = auditHosts(st, a.since, a.last, a.want)
	a.rep.Problems = append(a.rep.Problems, hostProblems...)
	a.consensus()
	return a.rep, nil
}

// auditor is one Audit: its options, its report and what one phase leaves
// the next.
type auditor struct {
	st          *store.Store
	opts        Options
	rep         *Report
	since, last uint64 // the epochs audited: since..last
	links       proofLinks
	local       map[peer.ID]bool    // validators whose round evidence is here
	covered     map[coverKey]bool   // records whose rounds_root matched
	epochs      []uint64            // the epochs with records, ascending
	chain       map[peer.ID]*walked // each validator's record chain so far
}

type coverKey struct {
	v peer.ID
	e uint64
}

// walked is the walk of one validator's record chain: the IDs its next
// record may link to, the last epoch seen and the scorer recomputing it.
type walked struct {
	prev      [][32]byte
	lastEpoch uint64
	scorer    *epoch.Scorer
	skipped   bool // a local validator with records before the audit's start
}

func newAuditor(st *store.Store, opts Options) *auditor {
	a := &auditor{st: st, opts: opts, rep: &Report{ConsensusHashes: map[uint64]string{}}, last: ^uint64(0),
		local: map[peer.ID]bool{}, covered: map[coverKey]bool{}, chain: map[peer.ID]*walked{}}
	if opts.Since != nil {
		a.since = *opts.Since
	}
	if opts.Epoch != nil {
		a.last = *opts.Epoch
	}
	return a
}

func (a *auditor) bad(format string, args ...any) {
	a.rep.Problems = append(a.rep.Problems, fmt.Sprintf(format, args...))
}

// want says whether epoch e is audited (recomputed, its rounds checked).
func (a *auditor) want(e uint64) bool {
	return (a.opts.Epoch == nil || *a.opts.Epoch == e) && e >= a.since
}

func (a *auditor) evidenceBound() bool {
	from, err := a.st.EvidenceFrom()
	if err != nil {
		a.bad("evidence bound: %v", err)
		return false
	}
	a.rep.EvidenceFrom = from
	return true
}

// bounds are where v's evidence starts (from) and its weights are
// recomputed from (start): the first epoch with evidence that this audit
// covers; the scorer resumes from the checkpoint before it.
func (a *auditor) bounds(v peer.ID) (from, start uint64) {
	from = a.rep.EvidenceFrom
	if b, ok := a.opts.EvidenceFrom[v]; ok {
		from = b
	}
	return from, max(a.since, from)
}

func (a *auditor) equivocations() bool {
	links, err := auditEquivocations(a.st, a.since, a.last, a.want, a.rep, a.bad)
	a.links = links
	return err == nil
}

// localValidators finds the validators whose round evidence this store
// holds, unless the options name them.
func (a *auditor) localValidators() bool {
	for _, v := range a.opts.Local {
		a.local[v] = true
	}
	if a.opts.Local != nil {
		return true
	}
	for r, err := range a.st.Rounds(0, a.last) {
		if err != nil {
			a.bad("round records: %v", err)
			return false
		}
		a.local[peer.ID(r.Validator)] = true
	}
	return true
}

// epochRecords checks every epoch record's signature and hash chain and
// recomputes the local validators' weights.
func (a *auditor) epochRecords() bool {
	for ent, err := range a.st.EpochRecords(0, a.last) {
		if err != nil {
			a.bad("epoch records: %v", err)
			return false
		}
		a.rep.EpochRecords++
		v := peer.ID(ent.Validator)
		open := protocol.Open
		if ent.Epoch < a.since {
			open = protocol.Decode
		}
		o, err := open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			a.bad("epoch record %d of %s: %v", ent.Epoch, v, err)
			continue
		}
		rec := o.Msg.(*pb.EpochRecord)
		switch {
		case o.Author != v:
			a.bad("epoch record %d stored under %s is signed by %s", ent.Epoch, v, o.Author)
			continue
		case rec.Epoch != ent.Epoch:
			a.bad("epoch record stored as epoch %d says epoch %d", ent.Epoch, rec.Epoch)
			continue
		}
		a.link(v, ent.Epoch, rec, protocol.ID(o.Body))
		if len(a.epochs) == 0 || a.epochs[len(a.epochs)-1] != ent.Epoch {
			a.epochs = append(a.epochs, ent.Epoch)
		}
		if a.local[v] {
			a.recompute(v, ent.Epoch, rec)
		}
	}
	return true
}

// link checks that v's record of epoch e links to the one before it.
// Another validator's chain may start after its first record: this node
// may have joined later. From the first record held on, and for the node's
// own validators from the start, links must match.
func (a *auditor) link(v peer.ID, e uint64, rec *pb.EpochRecord, id [32]byte) {
	w := a.chain[v]
	if w != nil || a.local[v] {
		p := [][32]byte{{}}
		var lastEpoch uint64
		if w != nil {
			p, lastEpoch = w.prev, w.lastEpoch
		}
		// After a proven equivocation since the record held before, the
		// chain may continue from either record of the proof (this node may
		// hold neither: it ignores both once it has the proof).
		p = append(slices.Clone(p), a.links.since(v, lastEpoch, w != nil, e)...)
		if !slices.Contains(p, [32]byte(rec.PrevRecordHash)) {
			a.bad("epoch record %d of %s: hash chain broken (a record before it was deleted, altered or reordered)", e, v)
		}
	}
	if w == nil {
		w = &walked{}
		a.chain[v] = w
	}
	w.prev, w.lastEpoch = [][32]byte{id}, e
}

// recompute recomputes local validator v's record of epoch e from the
// evidence and compares it with rec.
func (a *auditor) recompute(v peer.ID, e uint64, rec *pb.EpochRecord) {
	w := a.chain[v]
	from, start := a.bounds(v)
	if e < start {
		if e < from && a.want(e) {
			a.rep.Pruned++
		}
		w.skipped = true
		return
	}
	if w.scorer == nil {
		// A scorer that skipped records resumes from its checkpoint.
		w.scorer = &epoch.Scorer{Store: a.st, Validator: v, Config: a.opts.Scoring, Resume: w.skipped}
		if msg := checkResume(a.st, v, start, from); w.skipped && msg != "" {
			a.bad("%s", msg)
		}
	}
	again, _, err := w.scorer.Close(e)
	if err != nil {
		a.bad("epoch record %d of %s: recomputing: %v", e, v, err)
		return
	}
	if msg := checkCheckpoint(a.st, v, e, w.scorer); msg != "" {
		a.bad("%s", msg)
	}
	if !a.want(e) {
		return
	}
	a.rep.Recomputed++
	switch {
	case !bytes.Equal(again.ScoringConfigHash, rec.ScoringConfigHash):
		a.bad("epoch record %d of %s: scored with another scoring configuration", e, v)
	case !bytes.Equal(again.RoundsRoot, rec.RoundsRoot):
		a.bad("epoch record %d of %s: round evidence differs from what the record commits to (a round record was added, deleted or altered)", e, v)
	case !sameWeights(again.Weights, rec.Weights):
		a.bad("epoch record %d of %s: weights differ from those recomputed from the evidence", e, v)
	default:
		a.covered[coverKey{v, e}] = true
	}
}

// rounds checks the round evidence, on every core: signatures dominate
// the cost. A round covered by a record whose rounds_root matched is
// already authenticated by the validator's signature on that record, so
// only the miner's commitment signature is checked again. Problems are
// sorted by key so the first one named does not depend on scheduling.
func (a *auditor) rounds() bool {
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
				n, err := Round(j.r, a.covered[coverKey{peer.ID(j.r.Validator), j.r.Epoch}])
				mu.Lock()
				a.rep.ProofsVerified += n
				if err != nil {
					findings = append(findings, finding{j.key, fmt.Sprintf("round record epoch %d round %d miner %s: %v", j.r.Epoch, j.r.Round, peer.ID(j.r.Miner), err)})
				}
				mu.Unlock()
			}
		}()
	}
	var scanErr error
	for r, err := range a.st.Rounds(a.since, a.last) {
		if err != nil {
			scanErr = err
			break
		}
		if a.want(r.Epoch) {
			a.rep.Rounds++
			jobs <- job{store.RoundKey(r.Epoch, r.Round, r.Miner), r}
		}
	}
	close(jobs)
	wg.Wait()
	if scanErr != nil {
		a.bad("round records: %v", scanErr)
		return false
	}
	slices.SortFunc(findings, func(x, y finding) int { return bytes.Compare(x.key, y.key) })
	for _, f := range findings {
		a.bad("%s", f.msg)
	}
	return true
}

// consensus recomputes each audited epoch's consensus.
func (a *auditor) consensus() {
	if len(a.epochs) == 0 {
		return
	}
	err := epoch.ConsensusEpochsFrom(a.st, a.epochs[len(a.epochs)-1], a.opts.Stakes, a.opts.Consensus, a.since, func(e uint64, r *consensus.Result) error {
		if a.want(e) {
			h := r.Hash()
			a.rep.ConsensusHashes[e] = hex.EncodeToString(h[:])
		}
		return nil
	})
	if err != nil {
		a.bad("consensus: %v", err)
	}
}

func sameWeights(a, b []*pb.MinerWeight) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.MinerWeight) bool {
		return bytes.Equal(x.Miner, y.Miner) && x.Weight == y.Weight
	})
}

// Round re-checks one round record's signed evidence and stated work;
// for a verified round its sample, timing and inclusion proofs, and for a
// failed one that its evidence shows a failure (auditFailed). covered skips the
// challenge's signature (see Audit). It returns how many proofs it
// verified.
func Round(r *store.RoundRecord, covered bool) (int, error) {
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
	roots, err := OpenCommitment(r, chain)
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
	sustained, peak := round.Throughput(StepArrivals(r), round.StepFLOPs(chain), round.PeakWindow, minTimed)
	if sustained != r.TFLOPS || peak != r.PeakTFLOPS {
		return fmt.Errorf("throughput %v (peak %v) does not follow from the root arrivals: %v (peak %v)", r.TFLOPS, r.PeakTFLOPS, sustained, peak)
	}
	return nil
}
