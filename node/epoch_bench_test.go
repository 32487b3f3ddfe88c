package node

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// synthStore fills an in-memory store with one validator's evidence:
// rounds verified rounds per miner per epoch, each with a signed challenge
// and commitment, a consistent sample and inclusion proof, and a signed
// epoch record per epoch, as a running validator would leave it.
func synthStore(b *testing.B, epochs, miners, rounds int) (*store.Store, peer.ID) {
	b.Helper()
	st, err := store.Open("db", store.Options{FS: memFS()})
	if err != nil {
		b.Fatal(err)
	}
	vkey, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	vid, _ := peer.IDFromPrivateKey(vkey)
	type mk struct {
		key crypto.PrivKey
		id  peer.ID
	}
	ms := make([]mk, miners)
	for i := range ms {
		ms[i].key, _, _ = crypto.GenerateEd25519Key(rand.Reader)
		ms[i].id, _ = peer.IDFromPrivateKey(ms[i].key)
	}
	scorer := &epoch.Scorer{Store: st, Validator: vid, Config: scoring.DefaultConfig(), Checkpoint: true}
	for e := 1; e <= epochs; e++ {
		for r := 1; r <= rounds; r++ {
			for _, m := range ms {
				rec := synthRound(b, vkey, vid, m.key, m.id, uint64(e), uint64(r))
				if err := st.PutRound(rec); err != nil {
					b.Fatal(err)
				}
			}
		}
		epochRec, _, err := scorer.Close(uint64(e))
		if err != nil {
			b.Fatal(err)
		}
		raw, err := protocol.Seal(vkey, epochRec)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.PutEpochRecord(uint64(e), []byte(vid), raw); err != nil {
			b.Fatal(err)
		}
	}
	return st, vid
}

// synthSteps is the synthetic rounds' step count: chained steps, each one
// root per sub-challenge, as the validator's rounds are.
const synthSteps = 4

// synthRound is one verified, step-based round record as a validator
// stores it: a signed challenge with steps and a first-root bound, the
// miner's signed commitment to every step's root, the sample that follows
// from the secret and the roots, one inclusion proof per sampled group,
// and root arrivals whose throughput the record states.
func synthRound(b *testing.B, vkey crypto.PrivKey, vid peer.ID, mkey crypto.PrivKey, miner peer.ID, e, r uint64) *store.RoundRecord {
	b.Helper()
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner)}
	binary.LittleEndian.PutUint64(p.Nonce[:], e<<32|r<<16)
	copy(p.Nonce[8:], miner[len(miner)-8:])
	var secret [32]byte
	copy(secret[:], p.Nonce[:])
	pb1, _ := p.MarshalBinary()
	sc := sample.Commit(secret)
	chRaw, err := protocol.Seal(vkey, &pb.Challenge{Version: 1, Epoch: e, Round: r, Miner: []byte(miner),
		Params: [][]byte{pb1}, SecretCommitment: sc[:], Samples: 8, DeadlineMs: 5000, Steps: synthSteps, FirstRootMs: 500})
	if err != nil {
		b.Fatal(err)
	}
	co, err := protocol.Open(chRaw, pb.MessageType_CHALLENGE)
	if err != nil {
		b.Fatal(err)
	}
	chain := proof.Chain{ID: protocol.ID(co.Body), Template: []proof.Params{p}, Steps: synthSteps}
	leaves := make([][]commit.CV, synthSteps) // step j's tiles (one sub-challenge)
	roots := make([][]commit.CV, synthSteps)
	var rootBytes [][]byte
	for j := range leaves {
		leaves[j] = make([]commit.CV, p.Tiles())
		for i := range leaves[j] {
			leaves[j][i][0], leaves[j][i][1], leaves[j][i][2], leaves[j][i][3] = byte(i), byte(r), byte(e), byte(j)
		}
		root, _ := commit.Root(leaves[j])
		roots[j] = []commit.CV{root}
		rootBytes = append(rootBytes, root[:])
	}
	cmRaw, err := protocol.Seal(mkey, &pb.Commitment{Version: 1, ChallengeId: chain.ID[:], Roots: rootBytes})
	if err != nil {
		b.Fatal(err)
	}
	idx, err := chain.Sample(secret, sc, roots, 8)
	if err != nil {
		b.Fatal(err)
	}
	rec := &store.RoundRecord{Epoch: e, Round: r, Miner: []byte(miner), Validator: []byte(vid),
		Challenge: chRaw, Commitment: cmRaw, Secret: secret, Indices: idx,
		CommitNanos: 1_000_000 + int64(r), FLOPs: synthSteps * round.StepFLOPs(chain), Verdict: store.VerdictVerified}
	arrivals := make([]time.Duration, synthSteps)
	for j := range arrivals {
		arrivals[j] = time.Duration(j+1)*time.Millisecond + time.Duration(r)
		rec.StepArrivals = append(rec.StepArrivals, int64(arrivals[j]))
	}
	rec.TFLOPS, rec.PeakTFLOPS = round.Throughput(arrivals, round.StepFLOPs(chain), round.PeakWindow, 0)
	for _, g := range chain.Groups(idx) {
		pr, _ := commit.Prove(leaves[g.Step], g.Tiles)
		prb, _ := pr.MarshalBinary()
		rec.Proofs = append(rec.Proofs, prb)
		for k, t := range g.Tiles {
			rec.Tiles = append(rec.Tiles, store.TileVerdict{Index: idx[g.First+k], OK: true})
			rec.Leaves = append(rec.Leaves, [32]byte(leaves[g.Step][t]))
		}
	}
	return rec
}

// BenchmarkEpochClose scores an epoch of M miners from the store and
// signs the record (target at 1,000 miners × 3 rounds: ≤ 50 ms). Rounds
// per miner: 3, the testnet's, and 21, one validator's among 16 equal
// ones over a production epoch (0.076 owned slots a second × 4,320 s ÷
// 16, SPEC §16).
func BenchmarkEpochClose(b *testing.B) {
	for _, miners := range []int{100, 300, 1000} {
		for _, rounds := range []int{3, 21} {
			b.Run(fmt.Sprintf("miners=%d/rounds=%d", miners, rounds), func(b *testing.B) { benchEpochClose(b, miners, rounds) })
		}
	}
}

func benchEpochClose(b *testing.B, miners, rounds int) {
	st, vid := synthStore(b, 1, miners, rounds)
	defer st.Close()
	key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := &epoch.Scorer{Store: st, Validator: vid, Config: scoring.DefaultConfig()}
		rec, _, err := s.Close(1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := protocol.Seal(key, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/close")
}

// BenchmarkAudit1000x100 audits 1,000 epochs × 100 miners (100,000 round
// records with signatures and proofs, 1,000 epoch records; target ≤ 10 s).
func BenchmarkAudit1000x100(b *testing.B) {
	epochs, miners := 1000, 100
	if testing.Short() {
		epochs = 50
	}
	st, vid := synthStore(b, epochs, miners, 1)
	defer st.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := audit.Audit(st, audit.Options{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{vid}})
		if err != nil || len(rep.Problems) > 0 {
			b.Fatalf("audit: %v %v", err, rep.Problems)
		}
		if rep.Rounds != epochs*miners || rep.Recomputed != epochs {
			b.Fatalf("audited %d rounds, %d records", rep.Rounds, rep.Recomputed)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/audit")
	b.ReportMetric(float64(epochs*miners), "rounds")
}

// BenchmarkScorerStartup is a restarted validator's first epoch close
// after 200 epochs × 100 miners: replaying every epoch ("replay") or
// resuming from the stored checkpoint ("checkpoint").
func BenchmarkScorerStartup(b *testing.B) {
	epochs := 200
	if testing.Short() {
		epochs = 20
	}
	st, vid := synthStore(b, epochs, 100, 1)
	defer st.Close()
	for _, resume := range []bool{false, true} {
		name := map[bool]string{false: "replay", true: "checkpoint"}[resume]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := &epoch.Scorer{Store: st, Validator: vid, Config: scoring.DefaultConfig(), Resume: resume}
				if _, _, err := s.Close(uint64(epochs + 1)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/startup")
		})
	}
}

// BenchmarkAuditSince audits 200 epochs × 100 miners in full and with
// --since the last epoch.
func BenchmarkAuditSince(b *testing.B) {
	epochs := uint64(200)
	if testing.Short() {
		epochs = 20
	}
	st, vid := synthStore(b, int(epochs), 100, 1)
	defer st.Close()
	for _, since := range []*uint64{nil, &epochs} {
		name := map[bool]string{true: "full", false: "since-last"}[since == nil]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rep, err := audit.Audit(st, audit.Options{Since: since, Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Local: []peer.ID{vid}})
				if err != nil || len(rep.Problems) > 0 {
					b.Fatalf("audit: %v %v", err, rep.Problems)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/audit")
		})
	}
}
