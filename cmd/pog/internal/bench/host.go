package bench

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/scoring"
	"lukechampine.com/blake3"
)

// Range bounds a numeric flag, inclusive.
type Range struct{ Min, Max float64 }

// HostRanges bounds the numeric flags of `pog bench --host`, for the
// Parse cmd/pog passes (its flag set is named "pog bench --host").
var HostRanges = map[string]Range{
	"workers": {0, 4096}, "samples": {1, host.MaxSegments},
	"cpu-chains": {0, 4096}, "cpu-steps": {2, 1 << 34}, "cpu-segment": {1, 1 << 30},
	"ram-mib": {1, 1 << 20}, "ram-walks": {0, 4096}, "ram-steps": {2, 1 << 34}, "ram-segment": {1, 1 << 20},
	"plot-mib": {1, 1 << 24}, "plot-walks": {1, 1024}, "plot-steps": {2, 1 << 30}, "plot-segment": {1, plot.MaxOpenBlocks},
}

// hostProof is what a validator measures of one host proof (SPEC §23.1),
// and what checking it cost; field names are a stable interface.
type hostProof struct {
	Chains          uint64  `json:"chains"`
	Steps           uint64  `json:"steps"`
	Segment         uint64  `json:"segment"`
	ProveSeconds    float64 `json:"prove_seconds"` // the miner's time to its root: elapsed
	StepNs          float64 `json:"step_ns"`       // per chain step
	StepsPerSecond  float64 `json:"steps_per_second"`
	BoundNs         float64 `json:"bound_ns"`
	Credit          float64 `json:"credit"`
	Samples         int     `json:"samples"`
	OpeningBytes    int     `json:"opening_bytes"`
	VerifySeconds   float64 `json:"verify_seconds"`
	VerifyCostRatio float64 `json:"verify_cost_ratio"` // verify ÷ prove seconds
	Verified        bool    `json:"verified"`
	Reason          string  `json:"reason,omitempty"`
}

type hostBenchResult struct {
	Miner string `json:"miner"`
	// Parts are the CPU, RAM and storage parts these measurements would
	// score against the reference host (SPEC §18, §23.7); nothing scores
	// them yet.
	Parts struct {
		CPU     float64 `json:"cpu"`
		RAM     float64 `json:"ram"`
		Storage float64 `json:"storage"`
	} `json:"parts"`
	// PartTerms are those parts with every figure behind them: each
	// term's proven raw figure and the reference host's.
	PartTerms []scoring.Part `json:"part_terms"`

	CPU struct {
		hostProof
		TableBytes             int     `json:"table_bytes"`
		CreditedStepsPerSecond float64 `json:"credited_steps_per_second"`
	} `json:"cpu"`
	RAM struct {
		hostProof
		CacheBytes       uint64  `json:"cache_bytes"`
		DatasetBytes     uint64  `json:"dataset_bytes"`
		BuildSeconds     float64 `json:"build_seconds"`
		BandwidthBps     float64 `json:"bandwidth_bytes_per_second"`
		CreditedBytes    float64 `json:"credited_bytes"`
		RecomputedStepNs float64 `json:"recomputed_step_ns"` // a walk holding nothing
		RecomputedCredit float64 `json:"recomputed_credit"`
		OnDiskStepNs     float64 `json:"on_disk_step_ns"` // a walk reading the dataset from a file
		OnDiskCredit     float64 `json:"on_disk_credit"`
		OnDiskUncached   bool    `json:"on_disk_page_cache_dropped"`
	} `json:"ram"`
	Storage struct {
		hostProof
		PlotBytes         uint64  `json:"plot_bytes"`
		BlockBytes        int     `json:"block_bytes"`
		BuildSeconds      float64 `json:"build_seconds"`
		BuildBps          float64 `json:"build_bytes_per_second"`
		CacheDropped      bool    `json:"page_cache_dropped"`
		ReadBps           float64 `json:"read_bytes_per_second"`
		CreditedBytes     float64 `json:"credited_bytes"`
		CheckSeconds      float64 `json:"announce_check_seconds"` // regenerating the sampled blocks
		RegeneratedStepNs float64 `json:"regenerated_step_ns"`    // a walk storing nothing
		RegeneratedCredit float64 `json:"regenerated_credit"`
	} `json:"storage"`
}

type hostBenchFlags struct {
	workers, samples                           int
	cpuChains, cpuSteps, cpuSegment            uint
	ramMiB, ramWalks, ramSteps, ramSegment     uint
	plotMiB, plotWalks, plotSteps, plotSegment uint
	plotDir, seed                              string
	jsonOut, quiet                             bool
	secret, cpuSeed, ramSeed, epochSeed        [32]byte
	plotSeed                                   [32]byte
	progress                                   io.Writer
}

// runBenchHost is `pog bench --host`: the three host proofs run locally,
// each proved, committed, sampled and verified as a validator would, with
// the figures it would measure (no round trip to subtract here).
func runBenchHost(args []string, stdout, stderr io.Writer, parse Parse) int {
	fs := flag.NewFlagSet("pog bench --host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f hostBenchFlags
	fs.Bool("host", true, "run the host proofs (required)")
	fs.IntVar(&f.workers, "workers", 0, "prover threads (0: one per CPU)")
	fs.IntVar(&f.samples, "samples", 66, "segments the validator samples per proof")
	fs.UintVar(&f.cpuChains, "cpu-chains", 0, "CPU chains (0: one per CPU)")
	fs.UintVar(&f.cpuSteps, "cpu-steps", 1<<20, "steps per CPU chain")
	fs.UintVar(&f.cpuSegment, "cpu-segment", 1<<8, "CPU steps per checkpoint")
	fs.UintVar(&f.ramMiB, "ram-mib", 64, "RAM dataset size in MiB (built at about 13 µs per 64-byte item per core; measures DRAM only if larger than the L3 cache)")
	fs.UintVar(&f.ramWalks, "ram-walks", 0, "RAM walks (0: one per CPU; more than one per CPU lengthens each walk's step)")
	fs.UintVar(&f.ramSteps, "ram-steps", 1<<20, "steps per RAM walk")
	fs.UintVar(&f.ramSegment, "ram-segment", 16, "RAM steps per checkpoint")
	fs.UintVar(&f.plotMiB, "plot-mib", 64, "plot size in MiB (built at about 40 ms per 64 KiB block per core)")
	fs.UintVar(&f.plotWalks, "plot-walks", 4, "storage audit walks")
	fs.UintVar(&f.plotSteps, "plot-steps", 1<<11, "steps per storage walk")
	fs.UintVar(&f.plotSegment, "plot-segment", 4, "storage steps per checkpoint")
	fs.StringVar(&f.plotDir, "plot-dir", "", "directory for the temporary plot file (default: the system temporary directory)")
	fs.StringVar(&f.seed, "seed", "", "derive every seed and the sampling secret from this string (default: random)")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	for name, dst := range map[string]*[32]byte{"secret": &f.secret, "cpu": &f.cpuSeed, "ram": &f.ramSeed, "epoch": &f.epochSeed, "plot": &f.plotSeed} {
		if f.seed != "" {
			blake3.DeriveKey(dst[:], "pog bench host "+name, []byte(f.seed))
		} else {
			rand.Read(dst[:])
		}
	}
	if f.workers == 0 {
		f.workers = runtime.GOMAXPROCS(0)
	}
	if !f.quiet {
		f.progress = stderr
	}
	var res hostBenchResult
	res.Miner = benchMiner.String()
	for _, run := range []func(*hostBenchFlags, *hostBenchResult) error{benchHostCPU, benchHostRAM, benchHostStorage} {
		if err := run(&f, &res); err != nil {
			fmt.Fprintf(stderr, "pog bench --host: %v\n", err)
			return 1
		}
	}
	res.score()
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(&res)
	} else {
		printBenchHost(stdout, &res)
	}
	for _, p := range []*hostProof{&res.CPU.hostProof, &res.RAM.hostProof, &res.Storage.hostProof} {
		if !p.Verified {
			fmt.Fprintf(stderr, "pog bench --host: verification failed: %s\n", p.Reason)
			return 1
		}
	}
	return 0
}

func (f *hostBenchFlags) say(format string, a ...any) {
	if f.progress != nil {
		fmt.Fprintf(f.progress, "pog bench --host: "+format+"\n", a...)
	}
}

// hostRound plays one host round locally through the validator's state
// machine (protocol/hostround, no round trip): prove returns the miner's
// checkpoint root, open the encoded opening of the sampled segments. It
// fills p's measurement and verdict.
func (f *hostBenchFlags) hostRound(p *hostProof, plan hostround.Plan, prove func() (commit.CV, error), open func([]uint64) ([]byte, error)) error {
	plan.Secret, plan.Samples, plan.RootBy = f.secret, f.samples, 24*time.Hour
	v, err := hostround.NewValidator(plan)
	if err != nil {
		return err
	}
	start := time.Now()
	v.Step(hostround.Start{})
	root, err := prove()
	if err != nil {
		return err
	}
	var fetch []uint64
	for _, a := range v.Step(hostround.Root{At: time.Since(start), Root: root}) {
		if x, ok := a.(hostround.Fetch); ok {
			fetch = x.Segments
		}
	}
	b, err := open(fetch)
	if err != nil {
		return err
	}
	t := time.Now()
	var out hostround.Outcome
	for _, a := range v.Step(hostround.Opening{Bytes: b}) {
		if x, ok := a.(hostround.Finish); ok {
			out = x.Outcome
		}
	}
	p.VerifySeconds = time.Since(t).Seconds()
	tm := host.Timing{Shape: plan.Shape, Elapsed: out.Elapsed}
	p.Chains, p.Steps, p.Segment = plan.Shape.Chains, plan.Shape.Steps, plan.Shape.Segment
	p.ProveSeconds, p.StepNs, p.StepsPerSecond = out.Elapsed.Seconds(), out.StepNs, tm.StepsPerSecond()
	p.BoundNs, p.Credit, p.Verified, p.Reason = plan.BoundNs, out.Credit, out.Verified, out.Reason
	p.Samples, p.OpeningBytes, p.VerifyCostRatio = len(out.Segments), len(b), p.VerifySeconds/p.ProveSeconds
	return nil
}

// commitOpen commits states and returns the round's prove and open steps
// for them.
func commitOpen(tag string, s host.Shape, states func() ([][]byte, error)) (func() (commit.CV, error), func([]uint64) ([]byte, error)) {
	var st [][]byte
	var leaves []commit.CV
	prove := func() (commit.CV, error) {
		var err error
		if st, err = states(); err != nil {
			return commit.CV{}, err
		}
		root, l, err := host.Commit(tag, st)
		leaves = l
		return root, err
	}
	open := func(segs []uint64) ([]byte, error) {
		op, err := host.Open(s, st, leaves, segs)
		if err != nil {
			return nil, err
		}
		return op.MarshalBinary()
	}
	return prove, open
}

func benchHostCPU(f *hostBenchFlags, res *hostBenchResult) error {
	chains := uint64(f.cpuChains)
	if chains == 0 {
		chains = uint64(f.workers)
	}
	p := &cpuwork.Params{Seed: f.cpuSeed, Miner: []byte(benchMiner), TableLog: cpuwork.DefaultTableLog,
		Shape: host.Shape{Chains: chains, Steps: uint64(f.cpuSteps), Segment: uint64(f.cpuSegment)}}
	if err := p.Validate(); err != nil {
		return err
	}
	f.say("cpu: %d chains × %d steps over a %d KiB table", chains, p.Steps, 8<<p.TableLog>>10)
	r := &res.CPU
	prove, open := commitOpen(cpuwork.Tag, p.Shape, func() ([][]byte, error) { return cpuwork.Prove(p, f.workers) })
	plan := hostround.Plan{Shape: p.Shape, BoundNs: cpuwork.StepBoundNs, Params: p.Encode(),
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			op, err := host.DecodeOpening(b, cpuwork.StateBytes)
			if err != nil {
				return err
			}
			return cpuwork.Verify(p, root, segs, op)
		}}
	if err := f.hostRound(&r.hostProof, plan, prove, open); err != nil {
		return err
	}
	r.TableBytes = 8 << p.TableLog
	r.CreditedStepsPerSecond = r.StepsPerSecond * r.Credit
	return nil
}

func benchHostRAM(f *hostBenchFlags, res *hostBenchResult) error {
	walks := uint64(f.ramWalks)
	if walks == 0 {
		walks = uint64(f.workers)
	}
	p := &memwalk.Params{Epoch: memwalk.Epoch{Seed: f.epochSeed, CacheLog: memwalk.DefaultCacheLog, Rounds: memwalk.DefaultRounds},
		Seed: f.ramSeed, Miner: []byte(benchMiner), Items: uint64(f.ramMiB) << 20 / 64,
		Shape: host.Shape{Chains: walks, Steps: uint64(f.ramSteps), Segment: uint64(f.ramSegment)}}
	if err := p.Validate(); err != nil {
		return err
	}
	r := &res.RAM
	r.CacheBytes, r.DatasetBytes = 64<<p.CacheLog, 64*p.Items
	if limit := memoryLimit(); limit > 0 && r.CacheBytes+r.DatasetBytes > limit {
		return fmt.Errorf("a %d MiB dataset and its %d MiB cache exceed 90%% of this machine's memory", r.DatasetBytes>>20, r.CacheBytes>>20)
	}
	f.say("ram: light cache of %d MiB, dataset of %d MiB", r.CacheBytes>>20, r.DatasetBytes>>20)
	cache, err := memwalk.NewCache(&p.Epoch)
	if err != nil {
		return err
	}
	t := time.Now()
	ds, err := memwalk.Build(cache.For(p.Miner), p.Items, f.workers)
	if err != nil {
		return err
	}
	r.BuildSeconds = time.Since(t).Seconds()
	f.say("ram: %d walks × %d steps", walks, p.Steps)
	prove, open := commitOpen(memwalk.Tag, p.Shape, func() ([][]byte, error) { return memwalk.Prove(p, ds, f.workers) })
	plan := hostround.Plan{Shape: p.Shape, BoundNs: memwalk.StepBoundNs, Params: p.Encode(),
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			op, err := host.DecodeOpening(b, memwalk.StateBytes)
			if err != nil {
				return err
			}
			return memwalk.Verify(p, cache, root, segs, op)
		}}
	if err := f.hostRound(&r.hostProof, plan, prove, open); err != nil {
		return err
	}
	r.BandwidthBps = 64 * r.StepsPerSecond * r.Credit
	r.CreditedBytes = float64(r.DatasetBytes) * r.Credit

	// The cheater holding nothing: one walk recomputing every item.
	steps := min(p.Steps, 2000)
	t = time.Now()
	memwalk.Walk(cache.For(p.Miner), p.Items, memwalk.Initial(p, 0), steps)
	r.RecomputedStepNs = float64(time.Since(t).Nanoseconds()) / float64(steps)
	r.RecomputedCredit = min(1, memwalk.StepBoundNs/r.RecomputedStepNs)
	return benchRAMOnDisk(f, p, ds, r.hostProof.Steps, &r.OnDiskStepNs, &r.OnDiskCredit, &r.OnDiskUncached)
}

// benchRAMOnDisk times the ram-on-disk miner: one walk reading each item
// from the dataset stored in a file, its pages dropped from the cache.
func benchRAMOnDisk(f *hostBenchFlags, p *memwalk.Params, ds *memwalk.Dataset, steps uint64, stepNs, credit *float64, dropped *bool) error {
	dir, err := os.MkdirTemp(f.plotDir, "pog-bench-dataset-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "dataset")
	if err := ds.WriteFile(path); err != nil {
		return err
	}
	src, err := memwalk.OpenDiskSource(path, p.Items)
	if err != nil {
		return err
	}
	defer src.Close()
	*dropped = src.DropCache() == nil
	steps = min(steps, 2000)
	t := time.Now()
	memwalk.Walk(src, p.Items, memwalk.Initial(p, 0), steps)
	if err := src.Err(); err != nil {
		return err
	}
	*stepNs = float64(time.Since(t).Nanoseconds()) / float64(steps)
	*credit = min(1, memwalk.StepBoundNs / *stepNs)
	return nil
}

// benchHostStorage measures the storage proof: it builds a plot, checks
// its announcement, audits it, and times a cheater that stores nothing.
func benchHostStorage(f *hostBenchFlags, res *hostBenchResult) error {
	pl := &plot.Plot{Miner: []byte(benchMiner), BlockLog: plot.DefaultBlockLog, Rounds: plot.DefaultRounds, Blocks: uint64(f.plotMiB) << 20 >> plot.DefaultBlockLog}
	if err := pl.Validate(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(f.plotDir, "pog-bench-plot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := &res.Storage
	r.PlotBytes, r.BlockBytes = pl.Bytes(), pl.BlockBytes()
	f.say("storage: building a %d MiB plot of %d KiB blocks in %s", r.PlotBytes>>20, r.BlockBytes>>10, dir)
	t := time.Now()
	file, plotLeaves, plotRoot, err := plot.Create(filepath.Join(dir, "plot"), pl, f.workers)
	if err != nil {
		return err
	}
	defer file.Close()
	r.BuildSeconds = time.Since(t).Seconds()
	r.BuildBps = float64(r.PlotBytes) / r.BuildSeconds
	if r.CheckSeconds, err = checkPlotAnnounce(f, pl, file, plotLeaves, plotRoot); err != nil {
		return err
	}
	a, err := auditPlot(f, res, pl, file, plotLeaves, plotRoot)
	if err != nil {
		return err
	}
	if r.RegeneratedStepNs, err = regeneratedStepNs(a, pl); err != nil {
		return err
	}
	r.RegeneratedCredit = min(1, plot.StepBoundNs/r.RegeneratedStepNs)
	return nil
}

// checkPlotAnnounce is the announce check, the validator regenerating
// sampled blocks of the plot; it returns the check's time in seconds.
func checkPlotAnnounce(f *hostBenchFlags, pl *plot.Plot, file *plot.File, plotLeaves []commit.CV, plotRoot commit.CV) (float64, error) {
	idx := host.Sample(f.secret, plotRoot, pl.Encode(), host.Shape{Chains: 1, Steps: pl.Blocks, Segment: 1}, f.samples)
	blocks := make([][]byte, len(idx))
	for k, b := range idx {
		blocks[k] = make([]byte, pl.BlockBytes())
		if err := file.ReadBlock(b, blocks[k]); err != nil {
			return 0, err
		}
	}
	proof, err := commit.Prove(plotLeaves, idx)
	if err != nil {
		return 0, err
	}
	t := time.Now()
	if err := plot.CheckPlot(pl, plotRoot, idx, blocks, proof); err != nil {
		return 0, err
	}
	return time.Since(t).Seconds(), nil
}

// auditPlot plays an audit round of walks over the plot file, page cache
// dropped where the system allows, and records its credit in res.
func auditPlot(f *hostBenchFlags, res *hostBenchResult, pl *plot.Plot, file *plot.File, plotLeaves []commit.CV, plotRoot commit.CV) (*plot.Audit, error) {
	r := &res.Storage
	a := &plot.Audit{Plot: *pl, Root: plotRoot, Seed: f.plotSeed, Shape: host.Shape{Chains: uint64(f.plotWalks), Steps: uint64(f.plotSteps), Segment: uint64(f.plotSegment)}}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	r.CacheDropped = file.DropCache() == nil
	f.say("storage: %d walks × %d steps (page cache dropped: %v)", a.Chains, a.Steps, r.CacheDropped)
	var states [][]byte
	var leaves []commit.CV
	prove := func() (commit.CV, error) {
		var err error
		if states, err = plot.Prove(a, file, int(a.Chains)); err != nil {
			return commit.CV{}, err
		}
		root, l, err := host.Commit(plot.Tag, states)
		leaves = l
		return root, err
	}
	open := func(segs []uint64) ([]byte, error) {
		op, err := plot.Open(a, file, plotLeaves, states, leaves, segs)
		if err != nil {
			return nil, err
		}
		return op.MarshalBinary()
	}
	plan := hostround.Plan{Shape: a.Shape, BoundNs: plot.StepBoundNs, Params: a.Encode(), MaxSample: a.MaxSample(),
		Check: func(root commit.CV, segs []uint64, b []byte) error {
			op, err := plot.DecodeOpening(b, pl.BlockLog)
			if err != nil {
				return err
			}
			return plot.Verify(a, root, segs, op)
		}}
	if err := f.hostRound(&r.hostProof, plan, prove, open); err != nil {
		return nil, err
	}
	r.ReadBps = float64(r.BlockBytes) * r.StepsPerSecond * r.Credit
	r.CreditedBytes = float64(r.PlotBytes) * r.Credit
	return a, nil
}

// regeneratedStepNs times the cheater storing nothing: one walk of a's
// plot regenerating every block it reads, in nanoseconds a step.
func regeneratedStepNs(a *plot.Audit, pl *plot.Plot) (float64, error) {
	cheat := *a
	cheat.Shape = host.Shape{Chains: 1, Steps: 2 * min(a.Segment, 16), Segment: min(a.Segment, 16)}
	t := time.Now()
	if _, err := plot.Prove(&cheat, plot.Regenerator{Plot: pl}, 1); err != nil {
		return 0, err
	}
	return float64(time.Since(t).Nanoseconds()) / float64(cheat.Steps), nil
}

// score fills the parts: the credited figures as scoring's ProvenHost,
// scored without the verified-round condition (there is no GPU round here).
func (r *hostBenchResult) score() {
	m := scoring.HostMeasurement{CPUChains: int(r.CPU.Chains), CPUStepsPerSecond: r.CPU.CreditedStepsPerSecond,
		RAMBytes: r.RAM.CreditedBytes, RAMBytesPerSecond: r.RAM.BandwidthBps,
		StorageBytes: r.Storage.CreditedBytes, StorageBytesPerSecond: r.Storage.ReadBps}
	c := scoring.DefaultConfig()
	c.AuxNeedsVerifiedRound = false
	b := scoring.Explain(c, scoring.Input{ProvenHost: m.ProvenHost()})
	r.Parts.CPU, r.Parts.RAM, r.Parts.Storage = b.CPU, b.RAM, b.Storage
	r.PartTerms = b.Parts[1:] // the GPU part is not played here
}

func printBenchHost(w io.Writer, r *hostBenchResult) {
	fmt.Fprintf(w, "miner %s (no round trip to subtract: measured locally)\n", r.Miner)
	line := func(name string, p *hostProof, what string) {
		v := "verified"
		if !p.Verified {
			v = "FAILED: " + p.Reason
		}
		fmt.Fprintf(w, "%-8s %d × %d steps in %s: %s per step per chain (bound %s, credit %.2f); %s\n",
			name, p.Chains, p.Steps, dur(p.ProveSeconds), dur(p.StepNs/1e9), dur(p.BoundNs/1e9), p.Credit, what)
		fmt.Fprintf(w, "         validator: %d segments, %d-byte opening, %s = %.2g of the miner's time; %s\n",
			p.Samples, p.OpeningBytes, dur(p.VerifySeconds), p.VerifyCostRatio, v)
	}
	c := &r.CPU
	line("cpu", &c.hostProof, fmt.Sprintf("%.3g steps/s, %.3g credited", c.StepsPerSecond, c.CreditedStepsPerSecond))
	m := &r.RAM
	line("ram", &m.hostProof, fmt.Sprintf("%s credited of %s, random reads %.0f MB/s", mibs(m.CreditedBytes), mibs(float64(m.DatasetBytes)), m.BandwidthBps/1e6))
	fmt.Fprintf(w, "         dataset built in %s; holding nothing: %s per step (credit %.3f); on disk: %s per step (credit %.3f)\n",
		dur(m.BuildSeconds), dur(m.RecomputedStepNs/1e9), m.RecomputedCredit, dur(m.OnDiskStepNs/1e9), m.OnDiskCredit)
	s := &r.Storage
	line("storage", &s.hostProof, fmt.Sprintf("%s credited of %s, reads %.0f MB/s", mibs(s.CreditedBytes), mibs(float64(s.PlotBytes)), s.ReadBps/1e6))
	cache := "page cache dropped"
	if !s.CacheDropped {
		cache = "reads may come from the page cache"
	}
	fmt.Fprintf(w, "         plot built at %.1f MB/s, announce check %s, %s; storing nothing: %s per step (credit %.3f)\n",
		s.BuildBps/1e6, dur(s.CheckSeconds), cache, dur(s.RegeneratedStepNs/1e9), s.RegeneratedCredit)
	fmt.Fprintln(w, "parts    each the share of the reference host's figure proven (SPEC §23.7), 1 at the reference:")
	for _, p := range r.PartTerms {
		fmt.Fprintf(w, "  %-7s %.3g: %s\n", p.Name, p.Value, provenTerms(p.Terms))
	}
	fmt.Fprintln(w, "         the reference is a whole 8-GPU server's host; a small part is a small host or a small --ram-mib, --plot-mib")
	fmt.Fprintln(w, "a validator plays these proofs with a miner each epoch over the network, its round trip subtracted (SPEC §23.8, §23.9)")
}

// provenTerms says each term as proven against the reference host, with
// the weight it has in its part and the cap a bandwidth meets.
func provenTerms(ts []scoring.Term) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("proven %s of the reference host's %s", quantity(t.Raw, t.Unit), quantity(t.Reference, t.Unit))
		if t.Weight != 1 {
			out[i] += fmt.Sprintf(" (weight %.2g)", t.Weight)
		}
		if t.Value < t.Raw/t.Reference {
			out[i] += fmt.Sprintf(", counted as %.3g: no more than the capacity's share", t.Value)
		}
	}
	return strings.Join(out, "; ")
}

// quantity prints a figure of scoring's units, bytes in decimal units as
// the reference states them.
func quantity(v float64, unit string) string {
	if unit != "bytes" {
		return sig3(v) + " " + unit
	}
	for _, u := range []struct {
		size float64
		name string
	}{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if v >= u.size {
			return sig3(v/u.size) + " " + u.name
		}
	}
	return sig3(v) + " bytes"
}

// sig3 is v to three significant digits, without an exponent from 1000 up
// (999.5 rounds to it).
func sig3(v float64) string {
	if v >= 999.5 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func mibs(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

// wantsHost reports whether bench args ask for the host proofs.
func wantsHost(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "--host" || a == "-host" || a == "--host=true" || a == "-host=true" })
}
