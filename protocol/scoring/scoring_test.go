package scoring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Reference figures used in the arithmetic below (DefaultConfig):
// node fp16 8·610 = 4880 TFLOPS, fp32 8·610 = 4880 (fp32 inputs are SIMT
// figures × k32, so their ratios read as against 8·49.6 = 396.8), memory
// 8·141 GB = 1128 GB; CPU 96·2.4 = 230.4 core-GHz; RAM 2000 GB, 10.24 GB/s (random reads);
// storage 5242.88 MB/s (block reads), 30 TB. GPU part = 0.8·(0.6·fp16n + 0.4·fp32n) +
// 0.2·memn with fpXn = (0.7·median + 0.3·peak) ÷ reference; with one class
// measured, its weight is 1.

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// gpus announces n GPUs named name.
func gpus(n int, name string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = name
	}
	return out
}

// rounds makes verified rounds of one precision, each proving mem bytes.
func rounds(p Precision, mem uint64, tflops ...float64) []Round {
	out := make([]Round, len(tflops))
	for i, t := range tflops {
		out[i] = Round{Precision: p, TFLOPS: t, Verified: true, ProvenMemoryBytes: mem}
	}
	return out
}

func cat(rs ...[]Round) []Round { return slices.Concat(rs...) }

// k32 turns a GPU's SIMT fp32 figure into its fp32-class rate by the
// fastest exact method (two int8 tensor-core passes, SPEC §11), the scale
// the reference uses: 49.6 → 610 for an H200. fp32 ratios below are
// written with SIMT figures, which k32 leaves unchanged.
const k32 = 610.0 / 49.6

// refAux is the reference node's CPU, RAM and storage.
func refAux(names []string) Hardware {
	return Hardware{GPUNames: names, CPUCores: 96, CPUGHz: 2.4, RAMBytes: 2e12, RAMGBps: 10.24,
		StorageBytes: 30e12, StorageMBps: 5242.88}
}

// refRounds is an 8×H200 node measured exactly at the table: three fp16 and
// three fp32 rounds, each proving the reference 1128 GB.
func refRounds() []Round {
	return cat(rounds(FP16, 1128e9, 4880, 4880, 4880), rounds(FP32, 1128e9, 396.8*k32, 396.8*k32, 396.8*k32))
}

// withMemory is the default configuration with version 6's memory weight:
// these cases pin the memory credit's arithmetic, which a network may
// still weigh.
func withMemory() Config {
	c := DefaultConfig()
	c.ThroughputWeight, c.MemoryWeight = 0.8, 0.2
	return c
}

func TestScoreMiner(t *testing.T) {
	def := withMemory()
	capped := withMemory()
	capped.Cap = 1.25
	open := withMemory()
	open.AuxNeedsVerifiedRound = false

	type want struct {
		gpu, cpu, ram, storage, total float64
		flags                         []string // nil: no flags
	}
	tests := []struct {
		name string
		cfg  Config
		in   Input
		want want
	}{
		{
			// Every quantity at the reference, host figures proven: each
			// part 1, total 0.55 + 0.20 + 0.15 + 0.10 = 1.
			name: "reference 8xH200 node",
			cfg:  def,
			in:   Input{Rounds: refRounds(), Hardware: refAux(gpus(8, "NVIDIA H200")), ProvenHost: refAux(nil)},
			want: want{gpu: 1, cpu: 1, ram: 1, storage: 1, total: 1},
		},
		{
			// The same announce without a host proof: the host parts
			// earn nothing and the score says why; 0.55.
			name: "announced host figures without a proof",
			cfg:  def,
			in:   Input{Rounds: refRounds(), Hardware: refAux(gpus(8, "NVIDIA H200"))},
			want: want{gpu: 1, total: 0.55,
				flags: []string{"announced CPU, RAM, storage not covered by a host proof: not credited"}},
		},
		{
			// A proof covering only the CPU: RAM and storage stay unpaid
			// and flagged. 0.55 + 0.2·1 = 0.75.
			name: "host proof covering the CPU only",
			cfg:  def,
			in: Input{Rounds: refRounds(), Hardware: refAux(gpus(8, "NVIDIA H200")),
				ProvenHost: Hardware{CPUCores: 96, CPUGHz: 2.4}},
			want: want{gpu: 1, cpu: 1, total: 0.75,
				flags: []string{"announced RAM, storage not covered by a host proof: not credited"}},
		},
		{
			// Up for 2 of 30 scheduled rounds: 2/30 of the reference GPU
			// part, 0.55·2/30 = 0.0366666667; missing is not failing.
			name: "available for 2 of 30 rounds",
			cfg:  def,
			in: Input{Rounds: append(cat(rounds(FP16, 1128e9, 4880), rounds(FP32, 1128e9, 396.8*k32)),
				slices.Repeat([]Round{{Precision: FP16, Missed: true}}, 28)...),
				Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{gpu: 2.0 / 30, total: 0.55 * 2 / 30,
				flags: []string{"availability 0.0667: 2 of 30 scheduled rounds answered and passed"}},
		},
		{
			// Only missed rounds: availability 0, nothing earned, no penalty.
			name: "every round missed",
			cfg:  def,
			in:   Input{Rounds: slices.Repeat([]Round{{Precision: FP16, Missed: true}}, 3), Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{flags: []string{"availability 0: 0 of 3 scheduled rounds answered and passed"}},
		},
		{
			// A proven fault beside missed rounds still zeroes the epoch.
			name: "fault beside missed rounds",
			cfg:  def,
			in: Input{Rounds: append(refRounds(), Round{Precision: FP16, Missed: true}, Round{Precision: FP16}),
				Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{flags: []string{"1 of 8 rounds failed: GPU part zeroed, penalty reset to 1",
				"availability 0.86: 6 of 7 scheduled rounds answered and passed"}},
		},
		{
			// GPU part 1, nothing else reported: 0.55·1 = 0.55.
			name: "reference GPUs only",
			cfg:  def,
			in:   Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{gpu: 1, total: 0.55},
		},
		{
			// 16×B200: fp16 16·1205 = 19280 ÷ 4880 = 3.95 → cap 1; fp32
			// 16·67.2 = 1075.2 ÷ 396.8 = 2.71 → 1; memory 16·192 = 3072 GB ÷
			// 1128 = 2.72 → 1. GPU = 0.8·1 + 0.2·1 = 1; total 0.55.
			name: "16xB200 capped at 1",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 3072e9, 19280), rounds(FP32, 3072e9, 1075.2*k32)),
				Hardware: Hardware{GPUNames: gpus(16, "NVIDIA B200")}},
			want: want{gpu: 1, total: 0.55},
		},
		{
			// Same node, cap 1.25: every ratio above caps at 1.25, GPU
			// = 0.8·1.25 + 0.2·1.25 = 1.25; total 0.55·1.25 = 0.6875.
			name: "16xB200 capped at 1.25",
			cfg:  capped,
			in: Input{Rounds: cat(rounds(FP16, 3072e9, 19280), rounds(FP32, 3072e9, 1075.2*k32)),
				Hardware: Hardware{GPUNames: gpus(16, "NVIDIA B200")}},
			want: want{gpu: 1.25, total: 0.6875},
		},
		{
			// 1×H100 at the table: 0.8·(0.6·570/4880 + 0.4·49/396.8) +
			// 0.2·80/1128 = 0.8·(0.0700819672 + 0.0493951613) + 0.0141843972
			// = 0.0955817028 + 0.0141843972 = 0.1097661000.
			name: "1xH100",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 80e9, 570), rounds(FP32, 80e9, 49*k32)),
				Hardware: Hardware{GPUNames: gpus(1, "NVIDIA H100 80GB HBM3")}},
			want: want{gpu: 0.10976609996587, total: 0.55 * 0.10976609996587},
		},
		{
			// 2×H100 measure 2·570 = 1140 and 2·49 = 98, prove 160 GB:
			// every ratio doubles, so the GPU part is 2·0.1097661 = 0.2195322.
			name: "2xH100 sum to twice one",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 160e9, 1140), rounds(FP32, 160e9, 98*k32)),
				Hardware: Hardware{GPUNames: gpus(2, "NVIDIA H100 80GB HBM3")}},
			want: want{gpu: 0.21953219993174, total: 0.55 * 0.21953219993174},
		},
		{
			// 16×H100: 9120/4880 = 1.87, 784/396.8 = 1.98, 1280/1128 =
			// 1.13: all capped, GPU 1 — sums stop counting at the cap.
			name: "16xH100 sum up to the cap",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 1280e9, 9120), rounds(FP32, 1280e9, 784*k32)),
				Hardware: Hardware{GPUNames: gpus(16, "H100 80GB HBM3")}},
			want: want{gpu: 1, total: 0.55},
		},
		{
			// fp16 rounds 100, 200, 300: median 200, peak 300, blend
			// 0.7·200 + 0.3·300 = 230; fp16 is the only class measured, so
			// its weight renormalises to 1. GPU = 0.8·230/4880 = 184/4880
			// = 0.0377049180.
			name: "peak vs sustained, odd count",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 0, 300, 100, 200)},
			want: want{gpu: 0.03770491803279, total: 0.55 * 0.03770491803279},
		},
		{
			// 100, 200, 300, 400: median (200+300)/2 = 250, peak 400, blend
			// 175 + 120 = 295. GPU = 0.8·295/4880 = 236/4880 = 0.0483606557.
			name: "peak vs sustained, even count",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 0, 400, 100, 300, 200)},
			want: want{gpu: 0.04836065573770, total: 0.55 * 0.04836065573770},
		},
		{
			// 1×RTX 4090 at the table, a fast fp32 card: fp16n =
			// 157/4880 = 0.0321721311, fp32n = 48.5/396.8 = 0.1222278226;
			// 0.8·(0.6·0.0321721311 + 0.4·0.1222278226) = 0.8·0.0681944077
			// = 0.0545555262; memory 0.2·24/1128 = 0.0042553191; GPU 0.0588108453.
			name: "fp16 and fp32 mix, RTX 4090",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 24e9, 157), rounds(FP32, 24e9, 48.5*k32)),
				Hardware: Hardware{GPUNames: gpus(1, "NVIDIA GeForce RTX 4090")}},
			want: want{gpu: 0.05881084532556, total: 0.55 * 0.05881084532556},
		},
		{
			// Only fp16 rounds at the reference (the validator drew no
			// fp32 round): the measured class carries the throughput.
			// GPU = 0.8·1 + 0.2·1 = 1.
			name: "fp16 only",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 1128e9, 4880), Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{gpu: 1, total: 0.55},
		},
		{
			// Only fp32 rounds at the reference, memory not proven
			// (0 bytes): GPU = 0.8·1 = 0.8.
			name: "fp32 only, no proven memory",
			cfg:  def,
			in:   Input{Rounds: rounds(FP32, 0, 396.8*k32), Hardware: Hardware{GPUNames: gpus(8, "H200")}},
			want: want{gpu: 0.8, total: 0.55 * 0.8},
		},
		{
			// Honest 8×H100 slightly under the table (fp16 4560, fp32
			// 392), proving 640 GB: throughput 0.8·(0.6·4560/4880 +
			// 0.4·392/396.8) = 0.8·(0.5606557377 + 0.3951612903) = 0.7646536224;
			// memory 0.2·640/1128 = 0.1134751773; GPU 0.8781287997.
			name: "proven memory, honest 8xH100",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 640e9, 4560), rounds(FP32, 640e9, 392*k32)),
				Hardware: Hardware{GPUNames: gpus(8, "NVIDIA H100 80GB HBM3")}},
			want: want{gpu: 0.87812879972696, total: 0.55 * 0.87812879972696},
		},
		{
			// The largest verified round counts: 100 GB beats 10 GB, and
			// is credited at most the announced class's 24 GB (a working
			// set is throughput × step time, not memory held): the plain
			// 4090 case's 0.0588108453.
			name: "proven memory is credited at most the announced GPUs' memory",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 10e9, 157), rounds(FP32, 100e9, 48.5*k32)),
				Hardware: Hardware{GPUNames: gpus(1, "RTX 4090")}},
			want: want{gpu: 0.0588108453255623, total: 0.55 * 0.0588108453255623,
				flags: []string{"proven memory 100 GB credited at the announced GPUs' 24 GB"}},
		},
		{
			// Below the announced class's memory the proven working set
			// counts as it is: 0.0588108453 − 0.2·24/1128 + 0.2·20/1128.
			name: "proven memory below the announced GPUs' memory",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 10e9, 157), rounds(FP32, 20e9, 48.5*k32)),
				Hardware: Hardware{GPUNames: gpus(1, "RTX 4090")}},
			want: want{gpu: 0.0588108453255623 - 0.2*4.0/1128, total: 0.55 * (0.0588108453255623 - 0.2*4.0/1128)},
		},
		{
			// Announces 8×H200 but measures like 8×RTX 4090 (fp16
			// 8·157 = 1256 < floor 0.5·4880 = 2440; fp32 8·48.5 = 388 ≥
			// 198.4, not flagged). The contradicted announcement earns no
			// memory credit. GPU = 0.8·(0.6·1256/4880 + 0.4·388/396.8)
			// = 0.8·(0.1544262295 + 0.3911290323) = 0.4364442094.
			name: "over-claimer flagged: H200 announced, RTX 4090 measured",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 1128e9, 1256), rounds(FP32, 1128e9, 388*k32)),
				Hardware: Hardware{GPUNames: gpus(8, "NVIDIA H200")}},
			want: want{gpu: 0.43644420941301, total: 0.55 * 0.43644420941301, flags: []string{
				"announced 8× H200, measured 1256 TFLOPS fp16 < floor 2440",
				"proven memory 1128 GB not credited: the measurement contradicts the announced GPUs",
			}},
		},
		{
			// The brief's example: 8×H100 announced, 95 TFLOPS fp16
			// measured, floor 0.5·8·570 = 2280. Supported 95/4560 =
			// 0.0208333; no memory proven. GPU = 0.8·95/4880 =
			// 76/4880 = 0.0155737705.
			name: "over-claimer flagged: 8xH100 at 95 TFLOPS",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 0, 95), Hardware: Hardware{GPUNames: gpus(8, "NVIDIA H100 80GB HBM3")}},
			want: want{gpu: 0.01557377049180, total: 0.55 * 0.01557377049180, flags: []string{
				"announced 8× H100 80GB HBM3, measured 95 TFLOPS fp16 < floor 2280",
			}},
		},
		{
			// Honest H100s at 8·540 = 4320 ≥ 2280: no flag. fp16 only,
			// GPU = 0.8·4320/4880 = 0.7081967213.
			name: "honest H100 not flagged",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 0, 4320), Hardware: Hardware{GPUNames: gpus(8, "H100 80GB HBM3")}},
			want: want{gpu: 0.70819672131148, total: 0.55 * 0.70819672131148},
		},
		{
			// Mixed announcement 4×A100 + 4×H100: floor 0.5·(4·238.8 +
			// 4·570) = 1617.6; measured 1000 is below. GPU = 0.8·1000/4880
			// = 0.1639344262.
			name: "mixed announcement flagged on the sum",
			cfg:  def,
			in: Input{Rounds: rounds(FP16, 0, 1000), Hardware: Hardware{GPUNames: slices.Concat(
				gpus(4, "NVIDIA H100 80GB HBM3"), gpus(4, "NVIDIA A100-SXM4-80GB"))}},
			want: want{gpu: 0.16393442622951, total: 0.55 * 0.16393442622951, flags: []string{
				"announced 4× A100-SXM4-80GB + 4× H100 80GB HBM3, measured 1000 TFLOPS fp16 < floor 1617.6",
			}},
		},
		{
			// An unknown model is not checked and its proven memory earns
			// nothing: GPU = 0.8·362/4880 = 0.0593442623.
			name: "unknown GPU class",
			cfg:  def,
			in:   Input{Rounds: rounds(FP16, 48e9, 362), Hardware: Hardware{GPUNames: gpus(1, "NVIDIA L40S")}},
			want: want{gpu: 0.05934426229508, total: 0.55 * 0.05934426229508, flags: []string{
				`unknown GPU class "NVIDIA L40S" (1 announced): not checked, no memory credit`,
				"proven memory 48 GB not credited: an announced GPU is of no known class",
			}},
		},
		{
			// Aux below the reference, GPU at it: CPU 32·3.0/230.4 =
			// 0.4166666667; RAM capacity 512/2000 = 0.256, bandwidth
			// 5.12/10.24 = 0.5 credited at most 0.256: 0.5·0.256 + 0.5·0.256
			// = 0.256; storage capacity 4/30 = 0.1333333333, speed
			// 2621.44/5242.88 = 0.5 credited at most that: 0.1333333333.
			// Total 0.55 + 0.2·0.4166666667 + 0.15·0.256 + 0.1·0.1333333333
			// = 0.55 + 0.0833333333 + 0.0384 + 0.0133333333 = 0.6850666667.
			name: "aux hardware below the reference",
			cfg:  def,
			in: Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: Hardware{CPUCores: 32, CPUGHz: 3.0,
				RAMBytes: 512e9, RAMGBps: 5.12, StorageBytes: 4e12, StorageMBps: 2621.44}},
			want: want{gpu: 1, cpu: 0.41666666666667, ram: 0.256, storage: 0.13333333333333, total: 0.68506666666667},
		},
		{
			// One identity of four splitting the reference host: a quarter
			// of its RAM and plot, each walk alone at the full bandwidth.
			// RAM 0.5·0.25 + 0.5·min(0.25, 1) = 0.25, storage likewise, so
			// the four sum to the reference host's 1 in each part.
			name: "a quarter of a time-shared host",
			cfg:  def,
			in: Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: Hardware{
				RAMBytes: 500e9, RAMGBps: 10.24, StorageBytes: 7.5e12, StorageMBps: 5242.88}},
			want: want{gpu: 1, ram: 0.25, storage: 0.25, total: 0.55 + 0.15*0.25 + 0.1*0.25},
		},
		{
			// A slow walk over the whole reference dataset (credited at
			// half) keeps its bandwidth bound at the dataset it holds:
			// RAM 0.5·0.5 + 0.5·min(1, 1) = 0.75, not 0.5.
			name: "slow walk, whole dataset held",
			cfg:  def,
			in: Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: Hardware{
				RAMBytes: 1e12, RAMHeldBytes: 2e12, RAMGBps: 10.24}},
			want: want{gpu: 1, ram: 0.75, total: 0.55 + 0.15*0.75},
		},
		{
			// A far miner's only round of the epoch, its probe,
			// latency-bound at a thousandth of its class: verified
			// (availability 1, host parts paid) but neither scored nor
			// checked against the announced H200s, so no floor flag.
			name: "a probe is not scored",
			cfg:  def,
			in: Input{Rounds: []Round{{Precision: FP16, TFLOPS: 4.88, Verified: true, Probe: true}},
				Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: refAux(nil)},
			want: want{cpu: 1, ram: 1, storage: 1, total: 0.45},
		},
		{
			// 512 cores at 3.7 GHz, 12 TB RAM at 900 GB/s, 100 TB at
			// 14000 MB/s: every ratio above 1, each part capped at 1.
			// Total = 0.55 + 0.45 = 1.
			name: "aux hardware capped",
			cfg:  def,
			in: Input{Rounds: refRounds(), Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: Hardware{CPUCores: 512, CPUGHz: 3.7,
				RAMBytes: 12e12, RAMGBps: 900, StorageBytes: 100e12, StorageMBps: 14000}},
			want: want{gpu: 1, cpu: 1, ram: 1, storage: 1, total: 1},
		},
		{
			// Up for half its rounds: half the GPU part and half of each
			// host part, though one host proof showed the whole host.
			// Total = 0.55·0.5 + 0.45·0.5 = 0.5.
			name: "reference node at half availability",
			cfg:  def,
			in: Input{Rounds: cat(refRounds(), missed(6)), Hardware: Hardware{GPUNames: gpus(8, "H200")},
				ProvenHost: refAux(nil)},
			want: want{gpu: 0.5, cpu: 0.5, ram: 0.5, storage: 0.5, total: 0.5,
				flags: []string{"availability 0.5: 6 of 12 scheduled rounds answered and passed"}},
		},
		{
			// No round proven: even proven host figures earn nothing.
			name: "no verified round, aux not credited",
			cfg:  def,
			in:   Input{Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: refAux(nil)},
			want: want{},
		},
		{
			// The same with the gate off: 0.2 + 0.15 + 0.1 = 0.45.
			name: "no verified round, gate off",
			cfg:  open,
			in:   Input{Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: refAux(nil)},
			want: want{cpu: 1, ram: 1, storage: 1, total: 0.45},
		},
		{
			// A failed round zeroes the GPU part but, with one verified
			// round, proven aux still counts: 0.45.
			name: "failed round zeroes the GPU part",
			cfg:  def,
			in: Input{Rounds: append(refRounds(), Round{Precision: FP16}),
				Hardware: Hardware{GPUNames: gpus(8, "H200")}, ProvenHost: refAux(nil)},
			want: want{cpu: 1, ram: 1, storage: 1, total: 0.45,
				flags: []string{"1 of 7 rounds failed: GPU part zeroed, penalty reset to 1"}},
		},
		{
			// Garbage measurements and self-reports earn nothing rather
			// than NaN: every part 0.
			name: "non-finite and negative values",
			cfg:  def,
			in: Input{Rounds: cat(rounds(FP16, 0, math.NaN()), rounds(FP32, 0, math.Inf(1), -5)),
				ProvenHost: Hardware{CPUCores: -96, CPUGHz: -2.4, RAMGBps: math.NaN(), StorageMBps: math.Inf(1)}},
			want: want{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Miner = "m"
			s := ScoreMiner(tt.cfg, tt.in)
			got := []float64{s.GPU, s.CPU, s.RAM, s.Storage, s.Total}
			exp := []float64{tt.want.gpu, tt.want.cpu, tt.want.ram, tt.want.storage, tt.want.total}
			for i, part := range []string{"gpu", "cpu", "ram", "storage", "total"} {
				if !near(got[i], exp[i]) {
					t.Errorf("%s = %.15g, want %.15g", part, got[i], exp[i])
				}
			}
			if !slices.Equal(s.Flags, tt.want.flags) {
				t.Errorf("flags = %q\nwant    %q", s.Flags, tt.want.flags)
			}
			if s.Miner != "m" {
				t.Errorf("miner = %q", s.Miner)
			}
		})
	}
}

// Announcing bigger GPUs or a bigger host than one has never pays: the same
// measured rounds score at most what the honest announce scores. The rounds
// prove the honest GPUs' memory, the most their plan sizes (SPEC §16).
func TestOverclaimNeverPays(t *testing.T) {
	c := DefaultConfig()
	rs := cat(rounds(FP16, 8*24e9, 1256, 1256), rounds(FP32, 8*24e9, 388*k32))
	host := Hardware{CPUCores: 16, CPUGHz: 4.5, RAMBytes: 128e9, RAMGBps: 80, StorageBytes: 4e12, StorageMBps: 5000}
	honest := host
	honest.GPUNames = gpus(8, "RTX 4090")
	base := ScoreMiner(c, Input{Rounds: rs, Hardware: honest}).Total
	for _, claim := range []string{"H200", "B200", "H100 80GB HBM3", "A100-SXM4-80GB", "no-such-gpu"} {
		for _, f := range []float64{1, 4} {
			lie := Hardware{GPUNames: gpus(8, claim), CPUCores: int(f) * host.CPUCores, CPUGHz: host.CPUGHz,
				RAMBytes: uint64(f) * host.RAMBytes, RAMGBps: f * host.RAMGBps,
				StorageBytes: uint64(f) * host.StorageBytes, StorageMBps: f * host.StorageMBps}
			if got := ScoreMiner(c, Input{Rounds: rs, Hardware: lie}).Total; got > base {
				t.Errorf("announcing 8× %s and %g× the host scores %.6f > honest %.6f", claim, f, got, base)
			}
		}
	}
}

// The reference node scores 1.0 with no rounding at all, not just within
// tolerance: the weights add up in binary exactly enough.
func TestReferenceExact(t *testing.T) {
	s := ScoreMiner(DefaultConfig(), Input{Rounds: refRounds(), Hardware: refAux(gpus(8, "H200")), ProvenHost: refAux(nil)})
	if s.Total != 1 || s.GPU != 1 {
		t.Fatalf("total %.17g, gpu %.17g, want exactly 1", s.Total, s.GPU)
	}
	if s.FP16Peak != 4880 || s.FP16Sustained != 4880 || s.FP32Peak != 4880 || s.FP32Sustained != 4880 {
		t.Errorf("measured %+v", s)
	}
	if s.ProvenMemoryBytes != 1128e9 || s.Verified != 6 || s.Failures != 0 || s.Failed || s.Penalty != 0 {
		t.Errorf("evidence %+v", s)
	}
}

func TestPeakSustainedFigures(t *testing.T) {
	// Verified rounds 100, 200, 300; a failed round (TFLOPS 0 by the
	// store's rule) enters neither peak nor median.
	in := Input{Rounds: append(rounds(FP16, 0, 300, 100, 200), Round{Precision: FP16})}
	s := ScoreMiner(DefaultConfig(), in)
	if s.FP16Peak != 300 || s.FP16Sustained != 200 || s.FP32Peak != 0 || s.FP32Sustained != 0 {
		t.Errorf("peak %v sustained %v, fp32 %v %v", s.FP16Peak, s.FP16Sustained, s.FP32Peak, s.FP32Sustained)
	}
	// 0.7·200 + 0.3·300 = 230 of 4880, the only class measured (weight
	// renormalised to 1); the failure zeroes the GPU part, not the
	// measurement.
	if !near(s.Throughput, 230.0/4880) || s.GPU != 0 || !s.Failed {
		t.Errorf("throughput %v gpu %v failed %v", s.Throughput, s.GPU, s.Failed)
	}
	// Custom blend: sustained only → 200/4880.
	c := DefaultConfig()
	c.SustainedWeight, c.PeakWeight = 1, 0
	if s := ScoreMiner(c, in); !near(s.Throughput, 200.0/4880) {
		t.Errorf("sustained-only throughput %v", s.Throughput)
	}
}

func TestMultiGPUSums(t *testing.T) {
	c := DefaultConfig()
	one := ScoreMiner(c, Input{Rounds: cat(rounds(FP16, 80e9, 570), rounds(FP32, 80e9, 49*k32)),
		Hardware: Hardware{GPUNames: gpus(1, "H100 80GB HBM3")}})
	two := ScoreMiner(c, Input{Rounds: cat(rounds(FP16, 160e9, 1140), rounds(FP32, 160e9, 98*k32)),
		Hardware: Hardware{GPUNames: gpus(2, "H100 80GB HBM3")}})
	if math.Abs(two.GPU-2*one.GPU) > 1e-15 {
		t.Errorf("two GPUs %.17g, want twice %.17g", two.GPU, one.GPU)
	}
}

// TestPenaltyDecay follows one reference GPU node through a failure: the
// failing epoch earns 0 and carries 1; then the penalty halves each clean
// epoch (0.5, 0.25, 0.125 …) and the GPU part is 1 − penalty; 2^−10 < 0.001
// is forgiven. A second failure resets it to 1.
func TestPenaltyDecay(t *testing.T) {
	c := DefaultConfig()
	clean := refRounds()
	failed := append(refRounds(), Round{Precision: FP32})
	steps := []struct {
		rounds      []Round
		gpu, carry  float64
		failedEpoch bool
	}{
		{clean, 1, 0, false},
		{failed, 0, 1, true},
		{clean, 0.5, 0.5, false},   // 1·0.5
		{clean, 0.75, 0.25, false}, // 0.5·0.5
		{clean, 0.875, 0.125, false},
		{clean, 0.9375, 0.0625, false},
		{failed, 0, 1, true}, // reset, not max(0.03125, …) kept
		{clean, 0.5, 0.5, false},
		{clean, 0.75, 0.25, false},
		{clean, 0.875, 0.125, false},
		{clean, 0.9375, 0.0625, false},
		{clean, 0.96875, 0.03125, false},
		{clean, 1 - 0.015625, 0.015625, false},
		{clean, 1 - 0.0078125, 0.0078125, false},
		{clean, 1 - 0.00390625, 0.00390625, false},
		{clean, 1 - 0.001953125, 0.001953125, false},
		{clean, 1, 0, false}, // 2^−10 = 0.000977 < 0.001: forgiven
	}
	p := 0.0
	for i, st := range steps {
		s := ScoreMiner(c, Input{Rounds: st.rounds, Hardware: Hardware{GPUNames: gpus(8, "H200")}, Penalty: p})
		if s.GPU != st.gpu || s.Penalty != st.carry || s.Failed != st.failedEpoch {
			t.Fatalf("epoch %d: gpu %v penalty %v failed %v, want %v %v %v",
				i, s.GPU, s.Penalty, s.Failed, st.gpu, st.carry, st.failedEpoch)
		}
		p = s.Penalty
	}
}

func TestPenaltyInputs(t *testing.T) {
	c := DefaultConfig()
	for _, tt := range []struct{ carried, want float64 }{
		{math.NaN(), 0.5}, // corrupt state fails closed: treated as 1
		{7, 0.5},          // above 1: 1
		{-3, 0},           // negative: none
		{0.3, 0.15},
	} {
		s := ScoreMiner(c, Input{Rounds: refRounds(), Penalty: tt.carried})
		if s.Penalty != tt.want {
			t.Errorf("carried %v: penalty %v, want %v", tt.carried, s.Penalty, tt.want)
		}
	}
	// A different decay: 0.8 → 1, 0.8, 0.64.
	c.PenaltyDecay = 0.8
	if s := ScoreMiner(c, Input{Rounds: refRounds(), Penalty: 0.8}); !near(s.Penalty, 0.64) {
		t.Errorf("decay 0.8: %v, want 0.64", s.Penalty)
	}
}

func TestNameMatching(t *testing.T) {
	for _, n := range []string{"H200", "NVIDIA H200", "  nvidia   h200 ", "h200"} {
		if got := normName(n); got != "h200" {
			t.Errorf("normName(%q) = %q", n, got)
		}
	}
	if normName("NVIDIA GeForce RTX 4090") != normName("RTX 4090") {
		t.Error("GeForce prefix not ignored")
	}
	if normName("NVIDIA H100 PCIe") == normName("H100 80GB HBM3") {
		t.Error("distinct models matched")
	}
}

func TestWeights(t *testing.T) {
	tests := []struct {
		name   string
		totals map[string]float64
		want   []Weight
	}{
		// 0.5 + 0.3 + 0.2 = 1: weights equal totals.
		{"already normalised", map[string]float64{"c": 0.2, "a": 0.5, "b": 0.3},
			[]Weight{{"a", 0.5}, {"b", 0.3}, {"c", 0.2}}},
		// 1 + 1 + 2 = 4: 0.25, 0.25, 0.5.
		{"scaled", map[string]float64{"x": 2, "w": 1, "v": 1},
			[]Weight{{"v", 0.25}, {"w", 0.25}, {"x", 0.5}}},
		// 0.55 + 0 = 0.55: the only earner takes 1.
		{"one earner", map[string]float64{"b": 0, "a": 0.55},
			[]Weight{{"a", 1}, {"b", 0}}},
		// Nothing earned: all zero, still listed.
		{"all zero", map[string]float64{"b": 0, "a": 0},
			[]Weight{{"a", 0}, {"b", 0}}},
		// NaN, -1 and +Inf count as 0: 3 ÷ 3 = 1.
		{"garbage totals", map[string]float64{"a": math.NaN(), "b": -1, "c": math.Inf(1), "d": 3},
			[]Weight{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 1}}},
		{"empty", map[string]float64{}, []Weight{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var scores []Score
			for m, v := range tt.totals {
				scores = append(scores, Score{Miner: m, Total: v})
			}
			got := Weights(scores)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].Miner != tt.want[i].Miner || !near(got[i].Value, tt.want[i].Value) {
					t.Errorf("got %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
}

// TestDeterminism shuffles the epoch's inputs, and each miner's rounds and
// GPU names, and requires bit-identical scores and weights.
func TestDeterminism(t *testing.T) {
	c := DefaultConfig()
	ins := epochInputs(200, 30, 1)
	base := ScoreEpoch(c, clone(ins))
	baseW := Weights(base)
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 20; trial++ {
		sh := clone(ins)
		rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		for k := range sh {
			r, g := sh[k].Rounds, sh[k].Hardware.GPUNames
			rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
			rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
		}
		scores := ScoreEpoch(c, sh)
		if !reflect.DeepEqual(scores, base) {
			t.Fatalf("trial %d: scores differ", trial)
		}
		// Weights straight from shuffled scores, too.
		rng.Shuffle(len(scores), func(i, j int) { scores[i], scores[j] = scores[j], scores[i] })
		w := Weights(scores)
		for i := range w {
			if w[i] != baseW[i] {
				t.Fatalf("trial %d: weight %d %v != %v", trial, i, w[i], baseW[i])
			}
		}
	}
	sum := 0.0
	for i, w := range baseW {
		sum += w.Value
		if i > 0 && baseW[i-1].Miner >= w.Miner {
			t.Fatalf("weights not sorted by miner at %d", i)
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %v", sum)
	}
}

func clone(ins []Input) []Input {
	out := make([]Input, len(ins))
	for i, in := range ins {
		in.Rounds = slices.Clone(in.Rounds)
		in.Hardware.GPUNames = slices.Clone(in.Hardware.GPUNames)
		out[i] = in
	}
	return out
}

// epochInputs makes n miners with r rounds each: a spread of GPU classes and
// counts, some over-claimers, some failures, some penalties carried.
func epochInputs(n, r int, seed uint64) []Input {
	rng := rand.New(rand.NewPCG(seed, 1))
	classes := DefaultConfig().Classes
	ins := make([]Input, n)
	for i := range ins {
		k := classes[rng.IntN(len(classes))]
		count := 1 + rng.IntN(8)
		speed := 0.6 + 0.5*rng.Float64()
		if i%17 == 0 {
			speed = 0.2 // over-claimer
		}
		rs := make([]Round, r)
		for j := range rs {
			p, per := FP16, k.FP16TFLOPS
			if j%2 == 1 {
				p, per = FP32, k.FP32TFLOPS
			}
			rs[j] = Round{Precision: p, TFLOPS: float64(count) * per * speed * (0.9 + 0.2*rng.Float64()),
				Verified: !(i%23 == 0 && j == r/2), ProvenMemoryBytes: uint64(count) * k.MemoryBytes * 3 / 4}
		}
		ins[i] = Input{
			Miner:  fmt.Sprintf("12D3KooW%08d", rng.IntN(1e8)),
			Rounds: rs,
			Hardware: Hardware{GPUNames: gpus(count, "NVIDIA "+k.Name), CPUCores: 16 + rng.IntN(128),
				CPUGHz: 2 + rng.Float64(), RAMBytes: uint64(64+rng.IntN(2048)) * 1e9, RAMGBps: 50 + 300*rng.Float64(),
				StorageBytes: uint64(1+rng.IntN(40)) * 1e12, StorageMBps: 500 + 7000*rng.Float64()},
			Penalty: []float64{0, 0, 0, 0.5, 0.25}[rng.IntN(5)],
		}
	}
	return ins
}

func TestPrice(t *testing.T) {
	c := DefaultConfig()
	tests := []struct {
		name      string
		sustained float64
		gpus      int
		demand    float64
		want      float64
	}{
		// 4880/8 = 610 per GPU = the reference: 3.50·1·1 = 3.50.
		{"8xH200 at base demand", 4880, 8, 1, 3.50},
		// 157/610 = 0.2573770492; 3.50·0.2573770492 = 0.9008196721.
		{"1xRTX 4090", 157, 1, 1, 0.90081967213115},
		// 9640/8 = 1205 per GPU; 3.50·1205/610 = 6.9139344262: not capped.
		{"8xB200", 9640, 8, 1, 6.91393442622951},
		// 3.50·1·1.2 = 4.20.
		{"8xH200 at demand 1.2", 4880, 8, 1.2, 4.20},
		// demand 5 clamps to 2: 7.00; 0.1 clamps to 0.5: 1.75.
		{"demand clamped high", 4880, 8, 5, 7.00},
		{"demand clamped low", 4880, 8, 0.1, 1.75},
		{"NaN demand is the minimum", 4880, 8, math.NaN(), 1.75},
		{"no GPUs", 4880, 0, 1, 0},
		{"no fp16 rounds", 0, 8, 1, 0},
	}
	for _, tt := range tests {
		got := Price(c, Score{FP16Sustained: tt.sustained}, tt.gpus, tt.demand)
		if !near(got, tt.want) {
			t.Errorf("%s: %.15g, want %.15g", tt.name, got, tt.want)
		}
	}
	// Demand = clamp(utilisation/0.75, 0.5, 2).
	for _, tt := range []struct{ u, want float64 }{
		{0.75, 1}, {0.9, 1.2}, {0.3, 0.5}, {1, 1.3333333333333333}, {0, 0.5}, {math.NaN(), 0.5},
	} {
		if got := Demand(c, tt.u); !near(got, tt.want) {
			t.Errorf("Demand(%v) = %v, want %v", tt.u, got, tt.want)
		}
	}
	// End to end: the reference node at 90 % utilisation: 3.50·1.2 = 4.20.
	s := ScoreMiner(c, Input{Rounds: refRounds()})
	if got := Price(c, s, 8, Demand(c, 0.9)); !near(got, 4.2) {
		t.Errorf("reference node at 90%%: %v", got)
	}
}

func TestFlagsMentionNumbers(t *testing.T) {
	// Flags are evidence: they must carry the figures, not just a code.
	s := ScoreMiner(DefaultConfig(), Input{Rounds: rounds(FP32, 0, 20),
		Hardware: Hardware{GPUNames: gpus(8, "H200")}})
	// fp32 floor 0.5·396.8 = 198.4.
	want := "announced 8× H200, measured 20 TFLOPS fp32 < floor 198.4"
	if len(s.Flags) != 1 || s.Flags[0] != want {
		t.Errorf("flags %q, want %q", s.Flags, want)
	}
	if !strings.Contains(strings.Join(s.Flags, ""), "198.4") {
		t.Error("floor missing")
	}
}

// BenchmarkEpochClose1000 is a validator's epoch close: score 1000 miners
// with 30 rounds each and compute the weights.
func BenchmarkEpochClose1000(b *testing.B) {
	c := DefaultConfig()
	ins := epochInputs(1000, 30, 3)
	work := clone(ins)
	b.ReportAllocs()
	for b.Loop() {
		// ScoreMiner sorts copies, never the input; reuse is fair.
		Weights(ScoreEpoch(c, work))
	}
}

// TestBounds: whatever the inputs, parts stay in [0, Cap], the total in
// [0, Cap] and nothing is NaN.
func TestBounds(t *testing.T) {
	for _, cp := range []float64{1, 1.5} {
		c := DefaultConfig()
		c.Cap = cp
		ins := epochInputs(300, 12, 9)
		rng := rand.New(rand.NewPCG(3, 4))
		weird := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 1e300, 5e-324}
		for i := range ins {
			if i%3 == 0 {
				ins[i].Rounds[0].TFLOPS = weird[rng.IntN(len(weird))]
				ins[i].Hardware.CPUGHz = weird[rng.IntN(len(weird))]
				ins[i].Hardware.RAMGBps = weird[rng.IntN(len(weird))]
				ins[i].Penalty = weird[rng.IntN(len(weird))]
			}
			if i%5 == 0 {
				ins[i].Rounds[1].TFLOPS = 1e9 // far beyond any node
				ins[i].Hardware.RAMBytes = math.MaxUint64
			}
		}
		for _, s := range ScoreEpoch(c, ins) {
			for _, v := range []float64{s.GPU, s.CPU, s.RAM, s.Storage, s.Total, s.Throughput, s.Memory} {
				if !(v >= 0 && v <= cp+1e-12) {
					t.Fatalf("cap %v: %s out of bounds: %+v", cp, s.Miner, s)
				}
			}
			if !(s.Penalty >= 0 && s.Penalty <= 1) {
				t.Fatalf("penalty %v", s.Penalty)
			}
		}
	}
}

// missed is n missed fp16 rounds.
func missed(n int) []Round {
	out := make([]Round, n)
	for i := range out {
		out[i] = Round{Precision: FP16, Missed: true}
	}
	return out
}

// The default configuration (version 7) credits no GPU memory: a round's
// working set is its throughput times its step time, which distance and
// slow pongs lengthen, not memory the miner holds. An H100 whose rounds
// were stretched to its class memory (80 GB) scores as one whose rounds
// held 8 GB; under version 6's weights it gained 13 %.
func TestDefaultCreditsNoMemory(t *testing.T) {
	in := func(mem uint64) Input {
		return Input{Rounds: cat(rounds(FP16, mem, 570, 570, 570), rounds(FP32, mem, 49*k32, 49*k32, 49*k32)),
			Hardware: Hardware{GPUNames: gpus(1, "H100 80GB HBM3")}}
	}
	near, far := ScoreMiner(DefaultConfig(), in(8e9)), ScoreMiner(DefaultConfig(), in(80e9))
	if near.Total != far.Total || !(near.Total > 0) {
		t.Fatalf("default: near %v, far %v: want equal and positive", near.Total, far.Total)
	}
	if g := ScoreMiner(withMemory(), in(80e9)).Total / ScoreMiner(withMemory(), in(8e9)).Total; !(g > 1.1) {
		t.Fatalf("version 6's weights: the stretched rounds gained %.3f×, want the leak this version closes (> 1.1)", g)
	}
}
