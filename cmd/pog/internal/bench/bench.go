// Package bench is pog's local measurements: `pog bench` plays one proof
// round (miner and validator in one process) or, with --host, the three
// host proofs, and in cuda builds `pog gpu-check` checks the GPU kernels
// against the CPU path and a cuBLAS reference. cmd/pog's command table
// calls Run (and GPUCheck), passing its flag conventions as a Parse.
package bench

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	_ "github.com/pog-network/pog/kernels/cpu" // registers the cpu backend
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/scoring"
	"lukechampine.com/blake3"
)

// benchResult is the --json output; field names are a stable interface.
type benchResult struct {
	Backend         string  `json:"backend"`
	Precision       string  `json:"precision"`
	Size            uint32  `json:"size"`
	K               uint32  `json:"k"`
	Batch           uint32  `json:"batch"`
	Tile            int     `json:"tile"`
	Tiles           uint64  `json:"tiles"`
	Workers         int     `json:"workers"`
	GenerateSeconds float64 `json:"generate_seconds"`
	GemmSeconds     float64 `json:"gemm_seconds"`
	TFLOPS          float64 `json:"tflops"`
	HashSeconds     float64 `json:"hash_seconds"`
	HashGBps        float64 `json:"hash_gbps"`
	Root            string  `json:"root"`
	// The round's inputs and sample, so another implementation can
	// reproduce it from SPEC §2–§9 (hex is lowercase, of the raw bytes).
	Miner             string   `json:"miner"`             // peer ID text
	MinerHex          string   `json:"miner_hex"`         // the multihash bytes the parameters carry (§2)
	Nonce             string   `json:"nonce"`             // hex
	Params            string   `json:"params"`            // canonical encoding (§2), hex
	SecretCommitment  string   `json:"secret_commitment"` // H(s) (§8.1), hex
	Secret            string   `json:"secret"`            // s, revealed after the root, hex
	Indices           []uint64 `json:"indices"`           // sampled tiles (§8.3), ascending
	BatchProof        string   `json:"batch_proof"`       // the sampled tiles' inclusion proof (§7), hex
	Samples           int      `json:"samples"`
	DetectFraction    float64  `json:"detect_fraction"`
	DetectProbability float64  `json:"detect_probability"`
	Verified          bool     `json:"verified"`
	Reason            string   `json:"reason,omitempty"`
	VerifySeconds     float64  `json:"verify_seconds"`
	VerifyCostRatio   float64  `json:"verify_cost_ratio"`
	VerifyTimeRatio   float64  `json:"verify_time_ratio"`
	// The validator's check under each verification kernel, the first the
	// node's: verify_seconds and verify_core_seconds_per_round are its, and
	// the capacity follows from its CPU time.
	VerifyCoreSeconds float64     `json:"verify_core_seconds_per_round"`
	VerifyKernels     []verifyRun `json:"verify_kernels"`
	capacity
	Output string `json:"output,omitempty"`
	// What tflops is compared with: scoring's reference GPU and its GPU
	// class table at this precision (protocol/scoring.DefaultConfig).
	ReferenceSource   string       `json:"reference_source"`
	ReferenceTFLOPS   float64      `json:"reference_tflops"`
	ReferenceFraction float64      `json:"reference_fraction"` // tflops ÷ reference_tflops
	ReferenceClasses  []benchClass `json:"reference_classes"`
}

// benchClass is one GPU class of the scoring table at the bench's precision.
type benchClass struct {
	Name   string  `json:"name"`
	TFLOPS float64 `json:"tflops"`
}

// benchMiner is the bench's miner identity: the peer ID of the Ed25519 key
// whose seed is BLAKE3("pog bench miner"), so parameters carry real
// multihash bytes (SPEC §2) and --seed runs are reproducible.
var benchMiner = func() peer.ID {
	seed := blake3.Sum256([]byte("pog bench miner"))
	k, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		panic(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return id
}()

// Parse parses a command's flags as every pog command does: help on -h
// (code 0), a usage error printed on fs's output (code 2), the numeric
// flags checked against the ranges cmd/pog keeps under fs.Name().
type Parse func(fs *flag.FlagSet, args []string) (code int, ok bool)

// Run is `pog bench`: it returns the exit code, 0 verified, 1 a failed
// verification or an operational error, 2 a usage error.
func Run(args []string, stdout, stderr io.Writer, parse Parse) int {
	if wantsHost(args) {
		return runBenchHost(args, stdout, stderr, parse)
	}
	fs := flag.NewFlagSet("pog bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := defineBenchFlags(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	r, err := f.setup()
	if err != nil {
		return usageError(stderr, err)
	}
	return f.run(r, stdout, stderr)
}

// benchFlags are pog bench's flags, as parsed.
type benchFlags struct {
	backend, precision, output, seed, adversary, verifyKernel *string
	size, k, batch                                            *uint
	tileBytes, workers                                        *int
	fraction, target                                          *float64
	jsonOut, quiet                                            *bool
}

func defineBenchFlags(fs *flag.FlagSet) *benchFlags {
	var f benchFlags
	f.backend = fs.String("backend", "cpu", fmt.Sprintf("compute backend %v", kernels.Names()))
	f.size = fs.Uint("size", 2048, "output edge: A is size×K, B is K×size")
	f.k = fs.Uint("k", 0, "inner dimension K (0: the smaller of size and the precision's exactness limit)")
	f.batch = fs.Uint("batch", 1, "independent products in the challenge")
	f.tileBytes = fs.Int("tile", 64<<10, "tile size in bytes: 4·t² for a power-of-two edge t in [16, 512]")
	f.precision = fs.String("precision", "fp16", "precision class: fp16 or fp32")
	f.output = fs.String("output", "", "write the serialised output to this file (b3sum FILE prints the root)")
	f.jsonOut = fs.Bool("json", false, "print one JSON object instead of the summary")
	f.seed = fs.String("seed", "", "derive nonce and sampling secret from this string, for reproducible roots (default: random)")
	f.workers = fs.Int("workers", 0, "host threads (0: one per CPU)")
	f.fraction = fs.Float64("detect-fraction", sample.DefaultFraction, "fraction of faked tiles the sample must catch")
	f.target = fs.Float64("detect-probability", sample.DefaultProbability, "probability of catching that fraction")
	f.adversary = fs.String("adversary", "", "make the miner cheat, to see the verdict: lazy (skips every other tile) or tamper (alters served tiles)")
	f.quiet = fs.Bool("quiet", false, "no progress on stderr")
	f.verifyKernel = fs.String("verify-kernel", "", fmt.Sprintf("verification kernel to time (default: each of %s, the first the node's)",
		strings.Join(proof.VerifyKernels(), ", ")))
	fs.Bool("host", false, "run the CPU, RAM and storage host proofs instead (pog bench --host --help lists their flags)")
	return &f
}

// benchSetup is what the flags ask for: the round's parameters and secret,
// the sample size, the backend and the verification kernels to time.
type benchSetup struct {
	p             proof.Params
	secret        [32]byte
	samples       int
	be            kernels.Backend
	verifyKernels []string
}

// setup checks the flags and derives the round from them; an error is a
// usage error.
func (f *benchFlags) setup() (*benchSetup, error) {
	prec, err := proof.ParsePrecision(*f.precision)
	if err != nil {
		return nil, err
	}
	edge, err := tileEdge(*f.tileBytes)
	if err != nil {
		return nil, err
	}
	r := &benchSetup{}
	if r.verifyKernels, err = verifyKernelNames(*f.verifyKernel); err != nil {
		return nil, err
	}
	if *f.adversary != "" && *f.adversary != "lazy" && *f.adversary != "tamper" {
		return nil, fmt.Errorf("unknown adversary %q (want lazy or tamper)", *f.adversary)
	}
	if *f.size > proof.MaxDim || *f.batch > proof.MaxBatch || *f.k > 1<<20 {
		return nil, fmt.Errorf("size %d, k %d or batch %d out of range", *f.size, *f.k, *f.batch)
	}
	k := uint32(*f.k)
	if k == 0 {
		k = min(uint32(*f.size), prec.MaxK())
	}
	r.p = proof.Params{Precision: prec, Batch: uint32(*f.batch), M: uint32(*f.size), K: k, N: uint32(*f.size), Tile: edge, Miner: []byte(benchMiner)}
	if *f.seed != "" {
		blake3.DeriveKey(r.p.Nonce[:], "pog bench nonce", []byte(*f.seed))
		blake3.DeriveKey(r.secret[:], "pog bench secret", []byte(*f.seed))
	} else {
		rand.Read(r.p.Nonce[:])
		rand.Read(r.secret[:])
	}
	if err := r.p.Validate(); err != nil {
		return nil, err
	}
	if r.samples, err = sample.Count(*f.fraction, *f.target, r.p.Tiles()); err != nil {
		return nil, err
	}
	if r.be, err = kernels.Open(*f.backend); err != nil {
		return nil, err
	}
	return r, nil
}

// run plays the round, prints its result and returns the exit code.
func (f *benchFlags) run(r *benchSetup, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := r.p
	var prog *progress
	if !*f.quiet {
		prog = &progress{w: stderr}
		fmt.Fprintf(stderr, "pog bench: %s backend, %s, %d×%d×%d, batch %d, %d tiles of %d KiB\n",
			r.be.Name(), p.Precision, p.M, p.K, p.N, p.Batch, p.Tiles(), p.TileBytes()>>10)
	}
	res, err := benchRound(ctx, r.be, p, r.secret, r.samples, *f.workers, *f.adversary, *f.output, r.verifyKernels, prog)
	if err != nil {
		fmt.Fprintf(stderr, "pog bench: %v\n", err)
		return 1
	}
	res.DetectFraction = *f.fraction
	res.DetectProbability = sample.DetectProbability(r.samples, *f.fraction, p.Tiles())
	res.compare(scoring.DefaultConfig(), p.Precision)
	if *f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		printBench(stdout, res)
	}
	if !res.Verified {
		fmt.Fprintf(stderr, "pog bench: verification failed: %s\n", res.Reason)
		return 1
	}
	return 0
}

// usageError prints err as pog bench's usage error and returns 2.
func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "pog bench: %s\n", strings.TrimSpace(err.Error()))
	return 2
}

// tileEdge maps a tile size in bytes to its edge t, with 4·t² = bytes.
func tileEdge(b int) (uint32, error) {
	if b > 0 && b%4 == 0 && bits.OnesCount(uint(b)) == 1 && bits.TrailingZeros(uint(b/4))%2 == 0 {
		t := uint32(1) << (bits.TrailingZeros(uint(b/4)) / 2)
		if t >= proof.MinTile && t <= proof.MaxTile {
			return t, nil
		}
	}
	return 0, fmt.Errorf("tile %d bytes: want 4·t² for a power-of-two t in [%d, %d] (1024, 4096, 16384, 65536, 262144 or 1048576)",
		b, proof.MinTile, proof.MaxTile)
}

// benchRound plays miner and validator in one process. Errors are
// operational (out of memory, I/O); a cheating miner yields Verified=false.
func benchRound(ctx context.Context, be kernels.Backend, p proof.Params, secret [32]byte, samples, workers int,
	adversary, output string, verifyKernels []string, prog *progress) (*benchResult, error) {
	enc, err := p.MarshalBinary()
	if err != nil {
		return nil, err
	}
	res := &benchResult{Backend: be.Name(), Precision: p.Precision.String(), Size: p.M, K: p.K, Batch: p.Batch,
		Tile: p.TileBytes(), Tiles: p.Tiles(), Samples: samples, Workers: workers,
		Miner: peer.ID(p.Miner).String(), MinerHex: hex.EncodeToString(p.Miner), Nonce: hex.EncodeToString(p.Nonce[:]),
		Params: hex.EncodeToString(enc)}
	if res.Workers <= 0 {
		res.Workers = runtime.GOMAXPROCS(0)
	}
	opts := kernels.Options{Workers: workers}
	if be.Name() == "cpu" { // a GPU backend checks its device's free memory itself
		opts.MemoryLimit = memoryLimit()
	}
	if prog != nil {
		opts.Progress = prog.update
	}
	job, err := be.Start(p, opts)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	if adversary != "" {
		job = &cheatingJob{Job: job, p: p, mode: adversary}
	}
	leaves, root, err := mine(ctx, job, p, res)
	if err != nil {
		return nil, err
	}
	if output != "" {
		if err := writeOutput(job, p, output); err != nil {
			return nil, err
		}
		res.Output = output
	}
	tr := proof.Transcript{Params: p, SecretCommitment: sample.Commit(secret), Root: root, Secret: secret, Samples: samples}
	if err := validate(job, &tr, leaves, verifyKernels, prog, res); err != nil {
		return nil, err
	}
	return res, nil
}

// mine is the miner's side of the round: compute and commit, with each
// stage's time and rate recorded in res.
func mine(ctx context.Context, job kernels.Job, p proof.Params, res *benchResult) ([]commit.CV, commit.CV, error) {
	t0 := time.Now()
	if err := job.Generate(ctx); err != nil {
		return nil, commit.CV{}, err
	}
	t1 := time.Now()
	if err := job.Multiply(ctx); err != nil {
		return nil, commit.CV{}, err
	}
	t2 := time.Now()
	leaves, err := job.TileCVs(ctx)
	if err != nil {
		return nil, commit.CV{}, err
	}
	root, err := commit.Root(leaves)
	if err != nil {
		return nil, commit.CV{}, err
	}
	t3 := time.Now()
	res.GenerateSeconds, res.GemmSeconds, res.HashSeconds = t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds()
	res.TFLOPS = p.FLOPs() / res.GemmSeconds / 1e12
	res.HashGBps = float64(p.OutputBytes()) / res.HashSeconds / 1e9
	res.Root = hex.EncodeToString(root[:])
	return leaves, root, nil
}

// validate is the validator's side of the round: reveal the secret,
// sample, fetch the sampled tiles with their proof, and verify them under
// each kernel; the first kernel's verdict and cost go into res.
func validate(job kernels.Job, tr *proof.Transcript, leaves []commit.CV, verifyKernels []string, prog *progress, res *benchResult) error {
	p := tr.Params
	idx, err := tr.Indices()
	if err != nil {
		return err
	}
	tiles := make([][]byte, len(idx))
	for i, x := range idx {
		tiles[i] = make([]byte, p.TileBytes())
		if err := job.Tile(x, tiles[i]); err != nil {
			return err
		}
	}
	pr, err := commit.Prove(leaves, idx)
	if err != nil {
		return err
	}
	prb, err := pr.MarshalBinary()
	if err != nil {
		return err
	}
	res.SecretCommitment, res.Secret = hex.EncodeToString(tr.SecretCommitment[:]), hex.EncodeToString(tr.Secret[:])
	res.Indices, res.BatchProof = idx, hex.EncodeToString(prb)
	if res.VerifyKernels, err = verifyEach(tr, tiles, pr, verifyKernels, prog); err != nil {
		return err
	}
	v := res.VerifyKernels[0]
	res.VerifySeconds, res.VerifyCoreSeconds, res.Verified, res.Reason = v.Seconds, v.CoreSeconds, v.Verified, v.Reason
	res.capacity = nodeCapacity(v.CoreSeconds)
	res.VerifyCostRatio = proof.VerifyOps(p, tr.Samples) / p.FLOPs()
	res.VerifyTimeRatio = res.VerifySeconds / res.GemmSeconds
	return nil
}

func writeOutput(job kernels.Job, p proof.Params, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tile := make([]byte, p.TileBytes())
	for i := uint64(0); i < p.Tiles(); i++ {
		if err := job.Tile(i, tile); err != nil {
			f.Close()
			return err
		}
		if _, err := f.Write(tile); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// compare fills the reference figures from c's GPU table, what scoring
// divides throughput by (OpenBLAS is linked only into make bench-openblas).
func (r *benchResult) compare(c scoring.Config, prec proof.Precision) {
	fig := func(fp16, fp32 float64) float64 {
		if prec == proof.FP32 {
			return fp32
		}
		return fp16
	}
	r.ReferenceSource = fmt.Sprintf("protocol/scoring rules v%d, %s figures", c.Version, prec)
	r.ReferenceTFLOPS = fig(c.Reference.GPUFP16TFLOPS, c.Reference.GPUFP32TFLOPS)
	r.ReferenceFraction = r.TFLOPS / r.ReferenceTFLOPS
	r.ReferenceClasses = nil
	for _, g := range c.Classes {
		r.ReferenceClasses = append(r.ReferenceClasses, benchClass{g.Name, fig(g.FP16TFLOPS, g.FP32TFLOPS)})
	}
}

func printBench(w io.Writer, r *benchResult) {
	fmt.Fprintf(w, "backend    %s (%d workers), %s, %d×%d×%d, batch %d, %d tiles of %d KiB\n",
		r.Backend, r.Workers, r.Precision, r.Size, r.K, r.Size, r.Batch, r.Tiles, r.Tile>>10)
	fmt.Fprintf(w, "generate   %s\n", dur(r.GenerateSeconds))
	fmt.Fprintf(w, "multiply   %-10s %.3g TFLOP/s%s\n", dur(r.GemmSeconds), r.TFLOPS, r.versusTable())
	fmt.Fprintf(w, "hash       %-10s %.3g GB/s\n", dur(r.HashSeconds), r.HashGBps)
	fmt.Fprintf(w, "root       %s\n", r.Root)
	if r.Output != "" {
		fmt.Fprintf(w, "output     %s (b3sum prints the root)\n", r.Output)
	}
	printVerify(w, r)
	fmt.Fprintf(w, "cost       verify took %.3g× the multiply's time for %.3g %% of its operations: a verify operation\n", r.VerifyTimeRatio, 100*r.VerifyCostRatio)
	fmt.Fprintf(w, "           (input regeneration, arithmetic mod 2⁶¹−1) costs %.3g× a multiply FLOP here; the sample hardly\n", r.VerifyTimeRatio/r.VerifyCostRatio)
	fmt.Fprintln(w, "           grows with --size, so both ratios shrink as the product grows")
	fmt.Fprintf(w, "reference  %s, TFLOP/s: the reference GPU %.4g;%s (OpenBLAS: make bench-openblas)\n",
		r.ReferenceSource, r.ReferenceTFLOPS, r.classList())
	if r.Verified {
		fmt.Fprintln(w, "verdict    VERIFIED")
	} else {
		fmt.Fprintf(w, "verdict    FAILED: %s\n", r.Reason)
	}
}

// versusTable is tflops as a share of the reference GPU and of the table's
// slowest class, the nearest one a CPU or small GPU can be judged by.
func (r *benchResult) versusTable() string {
	if r.ReferenceTFLOPS <= 0 || len(r.ReferenceClasses) == 0 {
		return ""
	}
	low := slices.MinFunc(r.ReferenceClasses, func(a, b benchClass) int { return cmp.Compare(a.TFLOPS, b.TFLOPS) })
	return fmt.Sprintf(" = %.3g %% of the reference GPU, %.3g %% of the slowest class in the table (%s)",
		100*r.ReferenceFraction, 100*r.TFLOPS/low.TFLOPS, low.Name)
}

func (r *benchResult) classList() string {
	var b strings.Builder
	for i, c := range r.ReferenceClasses {
		sep := ","
		if i == 0 {
			sep = " the table"
		}
		fmt.Fprintf(&b, "%s %s %.4g", sep, c.Name, c.TFLOPS)
	}
	return b.String()
}

// dur is a duration in seconds rounded to three significant digits: the
// timers are noisier than that.
func dur(s float64) string {
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return "?"
	}
	d, unit := time.Duration(s*float64(time.Second)), time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}

// progress reports each stage on stderr: a line when it completes, and its
// percentage at most once a second while it runs.
type progress struct {
	mu         sync.Mutex
	w          io.Writer
	stage      kernels.Stage
	stageStart time.Time
	last       time.Time
	finished   bool
}

func (p *progress) update(s kernels.Stage, f float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if s != p.stage {
		p.stage, p.stageStart, p.last, p.finished = s, now, now, false
	}
	switch {
	case p.finished:
	case f >= 1:
		p.finished = true
		fmt.Fprintf(p.w, "  %-9s done in %s\n", s, dur(now.Sub(p.stageStart).Seconds()))
	case now.Sub(p.last) >= time.Second:
		p.last = now
		fmt.Fprintf(p.w, "  %-9s %3.0f%%  (%.0f s)\n", s, 100*f, now.Sub(p.stageStart).Seconds())
	}
}

func (p *progress) done(what string, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  %-9s done in %s\n", what, dur(time.Since(since).Seconds()))
}

// cheatingJob makes the miner misbehave for demonstrations and tests.
type cheatingJob struct {
	kernels.Job
	p    proof.Params
	mode string
}

// TileCVs commits to the lazy output: every other tile left as zeros.
func (c *cheatingJob) TileCVs(ctx context.Context) ([]commit.CV, error) {
	cvs, err := c.Job.TileCVs(ctx)
	if err != nil || c.mode != "lazy" {
		return cvs, err
	}
	zero := make([]byte, c.p.TileBytes())
	for i := 0; i < len(cvs); i += 2 {
		cvs[i] = commit.TileCV(zero, uint64(i))
	}
	return cvs, nil
}

func (c *cheatingJob) Tile(i uint64, dst []byte) error {
	if err := c.Job.Tile(i, dst); err != nil {
		return err
	}
	switch {
	case c.mode == "lazy" && i%2 == 0:
		clear(dst)
	case c.mode == "tamper":
		dst[0] ^= 1
	}
	return nil
}
