// Package scoring turns one epoch of a validator's evidence into per-miner
// scores, chain weights and GPU rental prices. It follows the SN27 Proof of
// GPU paper: GPU 55 %, CPU 20 %, RAM 15 %, storage 10 %, every quantity
// normalised against a reference node (8×H200 by default) and capped, so
// extreme setups are not over-rewarded.
//
// The GPU part comes only from rounds the validator measured and verified:
// per precision class, a blend of the best round (peak) and the median round
// (sustained), plus memory proven by the size of verified challenges, times
// the miner's availability (the share of its scheduled rounds it answered and
// passed). CPU, RAM and storage count only as far as a validator-measured
// host proof covers them; announced figures alone earn nothing.
//
// Announced GPU models are checked against the measurement: an announcement
// the measurement cannot support is flagged and earns no memory credit. A failed round zeroes the epoch's GPU part
// and starts a penalty that decays over later epochs; the penalty is an input
// and an output, so every function here is pure: no I/O, no clock, no
// randomness, and no result depends on map order or input order.
//
// Results must be bit-identical on every CPU, because audits compare weights
// bit for bit. Go may fuse x*y + z into one instruction with a single
// rounding (it does on arm64, ppc64, s390x and riscv64), so every product
// that is added or subtracted is wrapped in an explicit float64 conversion,
// which the Go spec defines as rounding and so forbids the fusion.
// TestNoFusedMultiplyAdd checks the arm64 build.
package scoring

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Precision is a challenge's precision class, numbered as in SPEC §2.
type Precision uint8

// Precision classes.
const (
	FP16 Precision = 1
	FP32 Precision = 2
)

// Round is one validator-measured round for one miner.
type Round struct {
	Precision Precision
	// TFLOPS is the validator's measurement: the round's FLOPs over all
	// sub-challenges (one per GPU) ÷ its own challenge→commitment time, so
	// it is already the sum over the miner's GPUs.
	TFLOPS   float64
	Verified bool // false: the round was missed or failed
	// Missed: the miner never answered (no first root, no commitment,
	// stream closed or unreachable). It lowers availability but proves no
	// fault; an unverified round that is not missed is a failure.
	Missed bool
	// ProvenMemoryBytes is the working set the round's challenge forced the
	// miner to hold (all sub-challenges together), as the validator sized
	// it. Only verified rounds count.
	ProvenMemoryBytes uint64
	// Probe marks the short round that sizes the next one: verified, it
	// counts for availability and memory, but its throughput, bound by a
	// far miner's round trip, is neither scored nor checked against the
	// announced class.
	Probe bool
}

// Hardware is what a miner announces about itself, or (host figures only)
// what validator-measured host proofs establish. Announced GPU names are
// checked against measurement; announced host figures are evidence only.
type Hardware struct {
	GPUNames     []string // one entry per GPU, as the driver names it
	CPUCores     int      // all sockets together
	CPUGHz       float64
	RAMBytes     uint64
	RAMGBps      float64
	StorageBytes uint64
	StorageMBps  float64 // sequential
	// RAMHeldBytes and StorageHeldBytes are a proof's dataset and plot
	// sizes before its timing credit (ProvenHost only; 0: RAMBytes and
	// StorageBytes): what bounds the bandwidths' credit.
	RAMHeldBytes, StorageHeldBytes uint64
}

// Input is one miner's epoch.
type Input struct {
	Miner    string
	Rounds   []Round
	Hardware Hardware // announced
	// ProvenHost is the part of the host's CPU, RAM and storage figures
	// the validators' host proofs credited (HostMeasurement.ProvenHost;
	// GPUNames unused). Zero when no host proof was credited, and the host
	// parts are then 0 (SPEC §23.7).
	ProvenHost Hardware
	Penalty    float64 // Score.Penalty of the miner's previous epoch; 0 if none
}

// Score is one miner's result for one epoch. Parts are in [0, Cap]; Total
// is their weighted sum. The measured figures and Flags are kept with the
// evidence so anyone can recompute and audit the score.
type Score struct {
	Miner   string  `json:"miner"`
	GPU     float64 `json:"gpu"`
	CPU     float64 `json:"cpu"`
	RAM     float64 `json:"ram"`
	Storage float64 `json:"storage"`
	Total   float64 `json:"total"`

	// Normalised GPU components before availability and the penalty: the
	// fp16/fp32 blend and the memory credit, each in [0, Cap].
	Throughput float64 `json:"throughput"`
	Memory     float64 `json:"memory"`
	// Availability is Verified ÷ (Verified + Missed), in [0, 1]; 0 without
	// rounds.
	Availability float64 `json:"availability"`

	// TFLOPS over the epoch's verified rounds of each class; 0 if none.
	FP16Peak          float64 `json:"fp16_peak_tflops"`
	FP16Sustained     float64 `json:"fp16_sustained_tflops"`
	FP32Peak          float64 `json:"fp32_peak_tflops"`
	FP32Sustained     float64 `json:"fp32_sustained_tflops"`
	ProvenMemoryBytes uint64  `json:"proven_memory_bytes"` // largest verified round's

	// Rounds.
	Verified int  `json:"verified"`
	Missed   int  `json:"missed"`
	Failures int  `json:"failures"`
	Failed   bool `json:"failed"` // a round failed: the GPU part is 0

	Penalty float64  `json:"penalty"`
	Flags   []string `json:"flags,omitempty"`
}

// ScoreMiner scores one miner's epoch. c must pass Validate.
//
//	fpX        = min(Cap, (SustainedWeight·median + PeakWeight·best) ÷ (GPUs·GPUfpX)), probes left out
//	Throughput = Σ weight·fpX ÷ Σ weight over classes with verified rounds
//	Memory     = min(Cap, min(proven, announced class memory) ÷ (GPUs·GPUMemoryBytes))  (0: see memoryCredit)
//	penalty    = failed ? 1 : carried·PenaltyDecay (0 below PenaltyFloor)
//	Avail      = verified ÷ (verified + missed)              (0 without rounds)
//	GPU        = (ThroughputWeight·Throughput + MemoryWeight·Memory)·Avail·(1 − penalty)
//	CPU        = hostAvail·min(Cap, cores·GHz ÷ (refCores·refGHz))     (proven figures only)
//	RAM        = hostAvail·(RAMCapacityWeight·ram + RAMBandwidthWeight·min(held, Cap, GB/s÷ref))
//	Storage    = hostAvail·(StorageSpeedWeight·min(held, Cap, MB/s÷ref) + StorageCapacityWeight·disk)
//	             ram, disk = min(Cap, credited bytes÷ref); held = min(Cap, the proof's dataset or plot bytes÷ref)
//	hostAvail  = Avail, or 1 for a miner with no rounds (host proofs alone)
//	Total      = GPUWeight·GPU + CPUWeight·CPU + RAMWeight·RAM + StorageWeight·Storage
//
// Credited memory is the proven memory, at most the announced GPUs' (see
// memoryCredit). Host parts use in.ProvenHost, never the announce; announced
// host figures without a proof are flagged as uncredited. The penalty returned is
// the one to carry into the next epoch. Explain returns the same score with
// every figure behind it.
func ScoreMiner(c Config, in Input) Score {
	return Explain(c, in).Score
}

// Explain scores one miner's epoch as ScoreMiner does (c must pass
// Validate) and returns every term of the formula with the score.
func Explain(c Config, in Input) Breakdown {
	b := Breakdown{Score: Score{Miner: in.Miner}, CarriedPenalty: carriedPenalty(in.Penalty),
		SustainedWeight: c.SustainedWeight, PeakWeight: c.PeakWeight}
	s := &b.Score
	fp16, fp32 := b.tally(in.Rounds)
	s.Penalty = nextPenalty(c, in.Penalty, s.Failed)
	have16, have32 := len(fp16) > 0, len(fp32) > 0
	b.Classes = classTerms(c, s, have16, have32)
	s.Throughput = throughput(b.Classes)
	cl := checkClaims(c, in.Hardware.GPUNames, have16, have32, s)
	s.Memory = memoryCredit(c, cl, s)
	b.Parts = append([]Part{gpuPart(c, s)}, hostParts(c, in, s)...)
	flagUnproven(in, s)
	s.GPU, s.CPU, s.RAM, s.Storage = b.Parts[0].Value, b.Parts[1].Value, b.Parts[2].Value, b.Parts[3].Value
	for _, p := range b.Parts {
		s.Total += p.Contribution
	}
	return b
}

// tally counts the rounds, notes each one's use, sets the peak and median
// throughput of each class from its scored rounds (which it returns), and
// flags failures, missed rounds and rounds of unknown precision.
func (b *Breakdown) tally(rounds []Round) (fp16, fp32 []float64) {
	s := &b.Score
	b.Uses = make([]Use, len(rounds))
	odd := 0
	for i, r := range rounds {
		b.Uses[i] = roundUse(r)
		switch b.Uses[i] {
		case UseMissed:
			s.Missed++
			continue
		case UseFailed:
			s.Failures++
			continue
		case UseUnknown:
			odd++
		case UseScored:
			if r.Precision == FP16 {
				fp16 = append(fp16, nonneg(r.TFLOPS))
			} else {
				fp32 = append(fp32, nonneg(r.TFLOPS))
			}
		}
		s.Verified++
		s.ProvenMemoryBytes = max(s.ProvenMemoryBytes, r.ProvenMemoryBytes)
	}
	s.FP16Peak, s.FP16Sustained = peakMedian(fp16)
	s.FP32Peak, s.FP32Sustained = peakMedian(fp32)
	s.Failed = s.Failures > 0
	if s.Failed {
		s.Flags = append(s.Flags, fmt.Sprintf("%d of %d rounds failed: GPU part zeroed, penalty reset to 1",
			s.Failures, s.Failures+s.Verified+s.Missed))
	}
	if n := s.Verified + s.Missed; n > 0 {
		s.Availability = float64(s.Verified) / float64(n)
	}
	if s.Missed > 0 {
		s.Flags = append(s.Flags, fmt.Sprintf("availability %s: %d of %d scheduled rounds answered and passed",
			num(s.Availability), s.Verified, s.Verified+s.Missed))
	}
	if odd > 0 {
		s.Flags = append(s.Flags, fmt.Sprintf("%d verified rounds of unknown precision: no throughput credit", odd))
	}
	return fp16, fp32
}

// roundUse is how a round counts: a missed round only lowers availability,
// any other unverified round is a failure, and a verified probe or round
// of no known class proves availability and memory but no throughput.
func roundUse(r Round) Use {
	switch {
	case r.Missed && !r.Verified:
		return UseMissed
	case !r.Verified:
		return UseFailed
	case r.Probe:
		return UseProbe
	case r.Precision != FP16 && r.Precision != FP32:
		return UseUnknown
	}
	return UseScored
}

// classTerms normalises each class's blend of sustained (median) and peak
// (best) throughput against the reference node, weighted by the class's
// weight if it had scored rounds and by 0 if not.
func classTerms(c Config, s *Score, have16, have32 bool) []Term {
	g := float64(c.Reference.GPUs)
	class := func(name string, sustained, peak, perGPU, w float64, have bool) Term {
		raw := float64(c.SustainedWeight*sustained) + float64(c.PeakWeight*peak)
		if !have {
			w = 0
		}
		return weigh(measured(name, "TFLOPS", raw, g*perGPU, c.Cap), w)
	}
	return []Term{
		class("fp16", s.FP16Sustained, s.FP16Peak, c.Reference.GPUFP16TFLOPS, c.FP16Weight, have16),
		class("fp32", s.FP32Sustained, s.FP32Peak, c.Reference.GPUFP32TFLOPS, c.FP32Weight, have32),
	}
}

// throughput weighs the classes measured this epoch, renormalised over
// them: the validator picks each round's class, so a class without rounds
// is chance (few rounds), not the miner's choice. Dodging a class by not
// answering its rounds costs availability, which a class share never repays.
func throughput(classes []Term) float64 {
	w := 0.0
	for _, t := range classes {
		w += t.Weight
	}
	if w == 0 {
		return 0
	}
	return sum(classes) / w
}

// gpuPart is ThroughputWeight·Throughput + MemoryWeight·Memory, times
// availability and 1 − penalty.
func gpuPart(c Config, s *Score) Part {
	ref := c.Reference
	tp := Term{Name: "throughput", Cap: c.Cap, Value: s.Throughput}
	mem := Term{Name: "memory", Raw: float64(s.ProvenMemoryBytes), Unit: "bytes",
		Reference: float64(ref.GPUs) * float64(ref.GPUMemoryBytes), Cap: c.Cap, Value: s.Memory}
	return part("gpu", c.GPUWeight, s.Availability, s.Penalty, weigh(tp, c.ThroughputWeight), weigh(mem, c.MemoryWeight))
}

// memoryCredit normalises the proven working set, at most the announced
// GPUs' class memory: a step's batches are independent and hashed as they
// finish, so a working set is throughput × step time, not memory held, and
// only the announce bounds it. No GPU of a known class announced, an
// unknown class beside them, or a measurement contradicting the
// announcement earn none. The cap pays a lie nothing while an honest
// miner's rounds prove less than its own class memory (SPEC §18).
func memoryCredit(c Config, cl claims, s *Score) float64 {
	if s.ProvenMemoryBytes == 0 {
		return 0
	}
	why := ""
	switch {
	case cl.contradicted:
		why = "the measurement contradicts the announced GPUs"
	case cl.unknown:
		why = "an announced GPU is of no known class"
	case cl.memory == 0:
		why = "no GPU announced"
	}
	if why != "" {
		s.Flags = append(s.Flags, fmt.Sprintf("proven memory %s GB not credited: %s", num(float64(s.ProvenMemoryBytes)/1e9), why))
		return 0
	}
	proven := float64(s.ProvenMemoryBytes)
	if proven > cl.memory {
		s.Flags = append(s.Flags, fmt.Sprintf("proven memory %s GB credited at the announced GPUs' %s GB",
			num(proven/1e9), num(cl.memory/1e9)))
	}
	return norm(min(proven, cl.memory), float64(c.Reference.GPUs)*float64(c.Reference.GPUMemoryBytes), c.Cap)
}

// hostParts are the CPU, RAM and storage parts from the proven host
// figures. A host up for a share of its rounds is paid that share of its
// host too: a host proof shows it was up once.
func hostParts(c Config, in Input, s *Score) []Part {
	ref, hw := c.Reference, in.ProvenHost
	avail, note := 1.0, ""
	if len(in.Rounds) > 0 {
		avail = s.Availability
	}
	if s.Verified == 0 && c.AuxNeedsVerifiedRound {
		avail, note = 0, "no verified round this epoch: host proofs are paid only beside one"
	}
	cpu := measured("cpu", "core·GHz", nonneg(float64(hw.CPUCores))*nonneg(hw.CPUGHz), float64(ref.CPUCores)*ref.CPUGHz, c.Cap)
	// A bandwidth is credited at most at its dataset's or plot's share of
	// the reference: a walk lasts milliseconds and can be time-shared by
	// identities, a keyed dataset or plot cannot (SPEC §23.7).
	ramHeld := norm(float64(max(hw.RAMHeldBytes, hw.RAMBytes)), float64(ref.RAMBytes), c.Cap)
	diskHeld := norm(float64(max(hw.StorageHeldBytes, hw.StorageBytes)), float64(ref.StorageBytes), c.Cap)
	ram := measured("ram capacity", "bytes", float64(hw.RAMBytes), float64(ref.RAMBytes), c.Cap)
	ramBW := bandwidth("ram bandwidth", "GB/s", hw.RAMGBps, ref.RAMGBps, c.Cap, ramHeld)
	disk := measured("storage capacity", "bytes", float64(hw.StorageBytes), float64(ref.StorageBytes), c.Cap)
	diskBW := bandwidth("storage speed", "MB/s", hw.StorageMBps, ref.StorageMBps, c.Cap, diskHeld)
	parts := []Part{
		part("cpu", c.CPUWeight, avail, 0, weigh(cpu, 1)),
		part("ram", c.RAMWeight, avail, 0, weigh(ram, c.RAMCapacityWeight), weigh(ramBW, c.RAMBandwidthWeight)),
		part("storage", c.StorageWeight, avail, 0, weigh(diskBW, c.StorageSpeedWeight), weigh(disk, c.StorageCapacityWeight)),
	}
	for i := range parts {
		parts[i].Note = note
	}
	return parts
}

// flagUnproven flags announced host figures no proof covers.
func flagUnproven(in Input, s *Score) {
	hw, ann := in.ProvenHost, in.Hardware
	var unproven []string
	for _, f := range []struct {
		name             string
		claimed, covered bool
	}{
		{"CPU", ann.CPUCores != 0 || ann.CPUGHz != 0, hw.CPUCores != 0 || hw.CPUGHz != 0},
		{"RAM", ann.RAMBytes != 0 || ann.RAMGBps != 0, hw.RAMBytes != 0 || hw.RAMGBps != 0},
		{"storage", ann.StorageBytes != 0 || ann.StorageMBps != 0, hw.StorageBytes != 0 || hw.StorageMBps != 0},
	} {
		if f.claimed && !f.covered {
			unproven = append(unproven, f.name)
		}
	}
	if len(unproven) > 0 {
		s.Flags = append(s.Flags, fmt.Sprintf("announced %s not covered by a host proof: not credited",
			strings.Join(unproven, ", ")))
	}
}

// ScoreEpoch scores every miner and returns the scores sorted by miner, so the
// result does not depend on the order of ins.
func ScoreEpoch(c Config, ins []Input) []Score {
	out := make([]Score, len(ins))
	for i, in := range ins {
		out[i] = ScoreMiner(c, in)
	}
	slices.SortStableFunc(out, func(a, b Score) int {
		if n := strings.Compare(a.Miner, b.Miner); n != 0 {
			return n
		}
		return cmpFloat(a.Total, b.Total)
	})
	return out
}

// Weight is one miner's share of the epoch's reward.
type Weight struct {
	Miner string
	Value float64
}

// Weights normalises totals to sum to 1, sorted by miner (ties by total) and
// summed in that order, so shuffling scores changes no bit. If every total
// is 0 every weight is 0. Non-finite or negative totals count as 0. Miners
// should be unique; duplicates are kept as separate entries.
func Weights(scores []Score) []Weight {
	ws := make([]Weight, len(scores))
	for i, s := range scores {
		v := s.Total
		if !(v > 0) || math.IsInf(v, 1) {
			v = 0
		}
		ws[i] = Weight{Miner: s.Miner, Value: v}
	}
	slices.SortFunc(ws, func(a, b Weight) int {
		if n := strings.Compare(a.Miner, b.Miner); n != 0 {
			return n
		}
		return cmpFloat(a.Value, b.Value)
	})
	sum := 0.0
	for _, w := range ws {
		sum += w.Value
	}
	if sum > 0 && !math.IsInf(sum, 1) {
		for i := range ws {
			ws[i].Value /= sum
		}
	} else {
		for i := range ws {
			ws[i].Value = 0
		}
	}
	return ws
}

// nextPenalty decays the carried penalty, forgives it below the floor, and
// resets it to 1 on a failure.
func nextPenalty(c Config, carried float64, failed bool) float64 {
	if failed {
		return 1
	}
	p := carriedPenalty(carried) * c.PenaltyDecay
	if p < c.PenaltyFloor {
		return 0
	}
	return p
}

// carriedPenalty is a carried penalty in [0, 1]. A corrupt value fails
// closed (NaN and values above 1 count as 1, negative ones as 0).
func carriedPenalty(p float64) float64 {
	if math.IsNaN(p) || p > 1 {
		return 1
	}
	return nonneg(p)
}

// claims is what the announced GPUs support.
type claims struct {
	memory       float64 // bytes: Σ class memory of announced GPUs of known classes
	unknown      bool    // an announced GPU is of no known class
	contradicted bool    // a measured class is below the floor of the announced GPUs
}

// checkClaims matches announced GPU names to classes, flags an announcement
// the measured sustained throughput cannot support, and reports the memory
// those GPUs could hold. Unknown names earn no memory credit: nothing bounds
// what they could claim.
func checkClaims(c Config, names []string, have16, have32 bool, s *Score) claims {
	keys := make([]string, len(c.Classes))
	for i, k := range c.Classes {
		keys[i] = normName(k.Name)
	}
	counts := make([]int, len(c.Classes))
	var unknown []string
	for _, n := range names {
		if i := slices.Index(keys, normName(n)); i >= 0 {
			counts[i]++
		} else {
			unknown = append(unknown, strings.TrimSpace(n))
		}
	}

	var claimed16, claimed32 float64
	var cl claims
	var parts []string
	order := make([]int, 0, len(c.Classes))
	for i, n := range counts {
		if n > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(c.Classes[a].Name, c.Classes[b].Name) })
	for _, i := range order {
		k, n := c.Classes[i], float64(counts[i])
		claimed16 += float64(n * k.FP16TFLOPS)
		claimed32 += float64(n * k.FP32TFLOPS)
		cl.memory += float64(n * float64(k.MemoryBytes))
		parts = append(parts, fmt.Sprintf("%d× %s", counts[i], k.Name))
	}
	announced := strings.Join(parts, " + ")

	check := func(have bool, measured, claimed float64, class string) {
		if !have || claimed <= 0 || measured >= c.ClaimFloor*claimed {
			return
		}
		s.Flags = append(s.Flags, fmt.Sprintf("announced %s, measured %s TFLOPS %s < floor %s",
			announced, num(measured), class, num(c.ClaimFloor*claimed)))
		cl.contradicted = true
	}
	check(have16, s.FP16Sustained, claimed16, "fp16")
	check(have32, s.FP32Sustained, claimed32, "fp32")

	slices.Sort(unknown)
	cl.unknown = len(unknown) > 0
	for i := 0; i < len(unknown); {
		j := i
		for j < len(unknown) && unknown[j] == unknown[i] {
			j++
		}
		s.Flags = append(s.Flags, fmt.Sprintf("unknown GPU class %q (%d announced): not checked, no memory credit",
			unknown[i], j-i))
		i = j
	}
	return cl
}

// peakMedian returns the best and the median of vs (the mean of the middle
// two for an even count), or zeros for none. vs is sorted in place.
func peakMedian(vs []float64) (peak, median float64) {
	n := len(vs)
	if n == 0 {
		return 0, 0
	}
	slices.Sort(vs)
	if n%2 == 1 {
		return vs[n-1], vs[n/2]
	}
	return vs[n-1], (vs[n/2-1] + vs[n/2]) / 2
}

// norm is v ÷ ref capped at limit. A value that is not a finite positive
// number (missing, negative, NaN, ±Inf: nothing a real node reports) is 0, as
// is anything against a non-positive reference.
func norm(v, ref, limit float64) float64 {
	if !(v > 0) || math.IsInf(v, 1) || !(ref > 0) {
		return 0
	}
	return min(v/ref, limit)
}

// nonneg maps NaN, negatives and +Inf to 0: a measurement that is not a
// finite non-negative number earns nothing.
func nonneg(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 1) {
		return 0
	}
	return v
}

// cmpFloat orders floats totally (NaN first) so sorting is deterministic.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case math.IsNaN(a) && !math.IsNaN(b):
		return -1
	case !math.IsNaN(a) && math.IsNaN(b):
		return 1
	}
	return 0
}

// num formats a figure for a flag: at most two decimals, no exponent.
// num is v to two decimals, or to three significant digits below 0.1 so
// that small (scaled, simulated) throughputs do not read as 0.
func num(v float64) string {
	if v != 0 && math.Abs(v) < 0.1 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
