package scoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"lukechampine.com/blake3"
)

// Config is one version of the scoring rules. Every field affects results, so
// every field enters Hash, and an epoch record that carries the hash names the
// exact rules its weights came from. The JSON tags fix the canonical encoding
// independently of Go field names.
type Config struct {
	// Version numbers the rules; bump it whenever a default or the
	// arithmetic changes.
	Version int `json:"version"`

	// The paper's split of a miner's total into parts. Sum to 1.
	GPUWeight     float64 `json:"gpu_weight"`
	CPUWeight     float64 `json:"cpu_weight"`
	RAMWeight     float64 `json:"ram_weight"`
	StorageWeight float64 `json:"storage_weight"`

	// Per precision, sustained (median round) and peak (best round)
	// throughput are blended before normalising. Sum to 1.
	SustainedWeight float64 `json:"sustained_weight"`
	PeakWeight      float64 `json:"peak_weight"`

	// Blend of the normalised fp16 and fp32 throughput. Sum to 1.
	FP16Weight float64 `json:"fp16_weight"`
	FP32Weight float64 `json:"fp32_weight"`

	// Split of the GPU part between throughput and challenge-proven memory.
	// Sum to 1.
	ThroughputWeight float64 `json:"throughput_weight"`
	MemoryWeight     float64 `json:"memory_weight"`

	// Splits of the RAM and storage parts. Each pair sums to 1.
	RAMCapacityWeight     float64 `json:"ram_capacity_weight"`
	RAMBandwidthWeight    float64 `json:"ram_bandwidth_weight"`
	StorageSpeedWeight    float64 `json:"storage_speed_weight"`
	StorageCapacityWeight float64 `json:"storage_capacity_weight"`

	// Reference is the node that scores 1.0 in every part.
	Reference Reference `json:"reference"`

	// Cap bounds every normalised quantity (value ÷ reference). 1 means
	// nothing beats the reference node; above 1 allows modest over-reward.
	Cap float64 `json:"cap"`

	// Classes are the GPU models whose announcements are checked against
	// measurement. Names match announced names after normalisation (case,
	// spacing, a leading "NVIDIA" and "GeForce" are ignored).
	Classes []GPUClass `json:"classes"`

	// ClaimFloor: a claim is flagged when measured sustained throughput is
	// below ClaimFloor × the announced GPUs' class figures. In [0, 1].
	ClaimFloor float64 `json:"claim_floor"`

	// PenaltyDecay multiplies the carried penalty each epoch; in [0, 1).
	// PenaltyFloor: a decayed penalty below it is forgiven (set to 0), so
	// a failure ends after a known number of epochs; in [0, 1).
	PenaltyDecay float64 `json:"penalty_decay"`
	PenaltyFloor float64 `json:"penalty_floor"`

	// AuxNeedsVerifiedRound: CPU, RAM and storage (proven host figures
	// only, Input.ProvenHost) earn nothing unless the miner also proved at
	// least one round this epoch: a host proof says what a machine has,
	// a verified round that it is working.
	AuxNeedsVerifiedRound bool `json:"aux_needs_verified_round"`

	// Dynamic pricing (see Price): USD per reference-GPU-hour, and the
	// utilisation target and clamp of the demand factor.
	BaseRateUSD  float64 `json:"base_rate_usd"`
	DemandTarget float64 `json:"demand_target"`
	DemandMin    float64 `json:"demand_min"`
	DemandMax    float64 `json:"demand_max"`
}

// Reference describes the node that scores exactly 1.0. GPU figures are per
// GPU; the node's are GPUs times them.
type Reference struct {
	GPUs           int     `json:"gpus"`
	GPUFP16TFLOPS  float64 `json:"gpu_fp16_tflops"`
	GPUFP32TFLOPS  float64 `json:"gpu_fp32_tflops"`
	GPUMemoryBytes uint64  `json:"gpu_memory_bytes"`
	CPUCores       int     `json:"cpu_cores"` // all sockets together
	CPUGHz         float64 `json:"cpu_ghz"`
	RAMBytes       uint64  `json:"ram_bytes"`
	RAMGBps        float64 `json:"ram_gbps"` // random 64-byte reads of the RAM proof's walks
	StorageBytes   uint64  `json:"storage_bytes"`
	StorageMBps    float64 `json:"storage_mbps"` // random block reads of the storage proof's walks
}

// GPUClass is one GPU model's throughput as the subnet's table measures it,
// and its memory.
type GPUClass struct {
	Name        string  `json:"name"`
	FP16TFLOPS  float64 `json:"fp16_tflops"`
	FP32TFLOPS  float64 `json:"fp32_tflops"`
	MemoryBytes uint64  `json:"memory_bytes"`
}

// DefaultConfig returns version 7 of the rules (version 1 credited announced
// host figures and had no availability factor; version 2 stated the
// reference's RAM and storage bandwidth as streaming figures, which no host
// proof measures; version 3 failed rounds that proved nothing; version 4
// credited a RAM or storage bandwidth beyond its capacity's share, which
// identities time-sharing one host could each claim in full; version 5
// credited a proven working set beyond the announced GPUs' memory; version
// 6 weighed the working set at 0.2 of the GPU part, which a long round
// trip inflates):
//
//   - Parts: GPU 0.55, CPU 0.20, RAM 0.15, storage 0.10 (the SN27 paper).
//   - GPU part: sustained 0.7 / peak 0.3 (sustained counts more: it is what a
//     renter gets); fp16 0.6 / fp32 0.4 (AI work is mostly half precision);
//     throughput 1 / memory 0 (version 7; 0.8 / 0.2 before): a round's
//     working set is its throughput × step time, which distance and slow
//     pongs lengthen, not memory held (SPEC §18).
//   - RAM: capacity 0.5 / bandwidth 0.5. Storage: speed 0.5 / capacity 0.5.
//     A bandwidth counts at most as much as its capacity (SPEC §23.7).
//   - Reference: one 8×H200 node. Per GPU 610 TFLOPS in each class (the
//     subnet's fp16 figure, BRIEF §7; node 4880): the fastest exact method
//     for the fp32 class, two int8 tensor-core passes, runs at the fp16
//     rate on Hopper (SPEC §11), so normalising it by SIMT fp32 (49.6)
//     would let one H100 reach the cap. 141 GB HBM per GPU (node
//     1.128 TB, decimal units throughout); CPU 2 sockets × 48 cores = 96
//     cores at 2.4 GHz (a typical dual-socket Xeon/EPYC HGX host); RAM 2 TB;
//     storage 30 TB (PCIe 4 NVMe). Bandwidths in the host proofs' units
//     (SPEC §23.7): RAM 10.24 GB/s, the validator's 16 walks of dependent
//     64-byte reads at a bare-metal DRAM latency of 100 ns; storage
//     5243 MB/s, its 8 walks of 64 KiB block reads at 100 µs each.
//   - Cap 1.0: no quantity scores above the reference node.
//   - Classes: the subnet's table (fp16 / fp32 TFLOPS) with vendor memory:
//     H200 610 / 49.6, 141 GB; H100 80GB HBM3 570 / 49.0, 80 GB;
//     A100-SXM4-80GB 238.8 / 18.2, 80 GB; RTX 4090 157 / 48.5, 24 GB;
//     B200 1205 / 67.2, 192 GB.
//   - ClaimFloor 0.5: measuring under half the announced class is flagged.
//   - Penalty: decay 0.5 (after a failed epoch, 50 % then 25 % … of the GPU
//     part is withheld), forgiven below 0.001 (the tenth clean epoch).
//   - AuxNeedsVerifiedRound true.
//   - Pricing: 3.50 USD per H200-hour; demand = utilisation ÷ 0.75 clamped
//     to [0.5, 2].
func DefaultConfig() Config {
	return Config{
		Version:   7,
		GPUWeight: 0.55, CPUWeight: 0.20, RAMWeight: 0.15, StorageWeight: 0.10,
		SustainedWeight: 0.7, PeakWeight: 0.3,
		FP16Weight: 0.6, FP32Weight: 0.4,
		ThroughputWeight: 1, MemoryWeight: 0,
		RAMCapacityWeight: 0.5, RAMBandwidthWeight: 0.5,
		StorageSpeedWeight: 0.5, StorageCapacityWeight: 0.5,
		Reference: Reference{
			GPUs: 8, GPUFP16TFLOPS: 610, GPUFP32TFLOPS: 610, GPUMemoryBytes: 141e9,
			CPUCores: 96, CPUGHz: 2.4,
			RAMBytes: 2e12, RAMGBps: 16 * 64 / 100e-9 / 1e9,
			StorageBytes: 30e12, StorageMBps: 8 * 65536 / 100e-6 / 1e6,
		},
		Cap: 1.0,
		Classes: []GPUClass{
			{Name: "H200", FP16TFLOPS: 610, FP32TFLOPS: 49.6, MemoryBytes: 141e9},
			{Name: "H100 80GB HBM3", FP16TFLOPS: 570, FP32TFLOPS: 49.0, MemoryBytes: 80e9},
			{Name: "A100-SXM4-80GB", FP16TFLOPS: 238.8, FP32TFLOPS: 18.2, MemoryBytes: 80e9},
			{Name: "RTX 4090", FP16TFLOPS: 157, FP32TFLOPS: 48.5, MemoryBytes: 24e9},
			{Name: "B200", FP16TFLOPS: 1205, FP32TFLOPS: 67.2, MemoryBytes: 192e9},
		},
		ClaimFloor:            0.5,
		PenaltyDecay:          0.5,
		PenaltyFloor:          1e-3,
		AuxNeedsVerifiedRound: true,
		BaseRateUSD:           3.50,
		DemandTarget:          0.75,
		DemandMin:             0.5,
		DemandMax:             2.0,
	}
}

// weightSumTolerance is how far a group of weights may be from 1: enough for
// decimal literals like 0.55+0.2+0.15+0.1, far below any meaningful change.
const weightSumTolerance = 1e-9

// Validate reports every problem with c, each naming its field. Scoring
// assumes a valid config; check once when the config is loaded.
func (c Config) Validate() error {
	var p problems
	if c.Version < 1 {
		p.bad("version", "%d, want >= 1", c.Version)
	}
	c.checkWeights(&p)
	c.Reference.check(&p)
	if !finite(c.Cap) || c.Cap < 1 {
		p.bad("cap", "%v, want a finite value >= 1", c.Cap)
	}
	c.checkClasses(&p)
	c.checkPenalties(&p)
	c.checkDemand(&p)
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("scoring config: %w", errors.Join(p...))
}

// problems collects Validate's findings, so that one load reports them all.
type problems []error

func (p *problems) bad(field string, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func (p *problems) positive(field string, v float64) {
	if !finite(v) || v <= 0 {
		p.bad(field, "%v, want a finite value > 0", v)
	}
}

// group checks one set of weights that split a whole: each finite and
// non-negative, together summing to 1.
func (p *problems) group(names []string, ws ...float64) {
	sum, ok := 0.0, true
	for i, w := range ws {
		if !finite(w) || w < 0 {
			p.bad(names[i], "%v, want a finite value >= 0", w)
			ok = false
		}
		sum += w
	}
	if ok && math.Abs(sum-1) > weightSumTolerance {
		p.bad(strings.Join(names, "+"), "sum to %v, want 1", sum)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (c Config) checkWeights(p *problems) {
	p.group([]string{"gpu_weight", "cpu_weight", "ram_weight", "storage_weight"},
		c.GPUWeight, c.CPUWeight, c.RAMWeight, c.StorageWeight)
	p.group([]string{"sustained_weight", "peak_weight"}, c.SustainedWeight, c.PeakWeight)
	p.group([]string{"fp16_weight", "fp32_weight"}, c.FP16Weight, c.FP32Weight)
	p.group([]string{"throughput_weight", "memory_weight"}, c.ThroughputWeight, c.MemoryWeight)
	p.group([]string{"ram_capacity_weight", "ram_bandwidth_weight"}, c.RAMCapacityWeight, c.RAMBandwidthWeight)
	p.group([]string{"storage_speed_weight", "storage_capacity_weight"}, c.StorageSpeedWeight, c.StorageCapacityWeight)
}

func (r Reference) check(p *problems) {
	if r.GPUs < 1 {
		p.bad("reference.gpus", "%d, want >= 1", r.GPUs)
	}
	p.positive("reference.gpu_fp16_tflops", r.GPUFP16TFLOPS)
	p.positive("reference.gpu_fp32_tflops", r.GPUFP32TFLOPS)
	if r.GPUMemoryBytes == 0 {
		p.bad("reference.gpu_memory_bytes", "0, want > 0")
	}
	if r.CPUCores < 1 {
		p.bad("reference.cpu_cores", "%d, want >= 1", r.CPUCores)
	}
	p.positive("reference.cpu_ghz", r.CPUGHz)
	if r.RAMBytes == 0 {
		p.bad("reference.ram_bytes", "0, want > 0")
	}
	p.positive("reference.ram_gbps", r.RAMGBps)
	if r.StorageBytes == 0 {
		p.bad("reference.storage_bytes", "0, want > 0")
	}
	p.positive("reference.storage_mbps", r.StorageMBps)
}

// checkClasses also rejects two classes that name the same GPU: a reported
// name would match only the first, leaving the second dead config.
func (c Config) checkClasses(p *problems) {
	seen := make(map[string]int, len(c.Classes))
	for i, k := range c.Classes {
		field := fmt.Sprintf("classes[%d]", i)
		key := normName(k.Name)
		if key == "" {
			p.bad(field+".name", "empty")
		} else if j, dup := seen[key]; dup {
			p.bad(field+".name", "%q is the same GPU as classes[%d] %q", k.Name, j, c.Classes[j].Name)
		} else {
			seen[key] = i
		}
		p.positive(field+".fp16_tflops", k.FP16TFLOPS)
		p.positive(field+".fp32_tflops", k.FP32TFLOPS)
		if k.MemoryBytes == 0 {
			p.bad(field+".memory_bytes", "0, want > 0")
		}
	}
}

func (c Config) checkPenalties(p *problems) {
	if !finite(c.ClaimFloor) || c.ClaimFloor < 0 || c.ClaimFloor > 1 {
		p.bad("claim_floor", "%v, want 0..1", c.ClaimFloor)
	}
	if !finite(c.PenaltyDecay) || c.PenaltyDecay < 0 || c.PenaltyDecay >= 1 {
		p.bad("penalty_decay", "%v, want >= 0 and < 1", c.PenaltyDecay)
	}
	if !finite(c.PenaltyFloor) || c.PenaltyFloor < 0 || c.PenaltyFloor >= 1 {
		p.bad("penalty_floor", "%v, want >= 0 and < 1", c.PenaltyFloor)
	}
}

func (c Config) checkDemand(p *problems) {
	if !finite(c.BaseRateUSD) || c.BaseRateUSD < 0 {
		p.bad("base_rate_usd", "%v, want a finite value >= 0", c.BaseRateUSD)
	}
	p.positive("demand_target", c.DemandTarget)
	if !finite(c.DemandMin) || c.DemandMin < 0 {
		p.bad("demand_min", "%v, want a finite value >= 0", c.DemandMin)
	}
	if !finite(c.DemandMax) || c.DemandMax < c.DemandMin {
		p.bad("demand_max", "%v, want a finite value >= demand_min %v", c.DemandMax, c.DemandMin)
	}
}

// hashContext is the BLAKE3 derive-key context of Hash: it separates config
// hashes from every other hash in pog and versions the encoding.
const hashContext = "pog 2026-11-29 scoring config v1"

// Hash identifies the rules: BLAKE3 in derive-key mode (context hashContext)
// over the config's JSON encoding, whose field order is the struct's. Classes
// are sorted by name first, since their order never changes a score.
func (c Config) Hash() [32]byte {
	c.Classes = slices.Clone(c.Classes)
	slices.SortFunc(c.Classes, func(a, b GPUClass) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(c)
	if err != nil {
		// Only non-finite floats fail to encode, and Validate rejects
		// them; hash the Go syntax instead, marked so it cannot collide
		// with a JSON encoding, to keep Hash total.
		b = []byte(fmt.Sprintf("invalid %#v", c))
	}
	var out [32]byte
	blake3.DeriveKey(out[:], hashContext, b)
	return out
}

// normName reduces a GPU name to the form classes are matched by: lower
// case, single spaces, without the vendor and product-line words drivers
// prepend ("NVIDIA GeForce RTX 4090" matches "RTX 4090").
func normName(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.TrimPrefix(s, "nvidia ")
	s = strings.TrimPrefix(s, "geforce ")
	return s
}

// LeastMemory is the least class memory of the named GPUs of known
// classes, or 0 if none is known: what a validator sizes one
// sub-challenge's output to at most, since scoring credits no more.
func (c Config) LeastMemory(names []string) uint64 {
	var least uint64
	for _, n := range names {
		for _, k := range c.Classes {
			if normName(k.Name) == normName(n) && (least == 0 || k.MemoryBytes < least) {
				least = k.MemoryBytes
			}
		}
	}
	return least
}
