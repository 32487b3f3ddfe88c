package scoring

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestExplainReproducesScore: for table and random inputs under two
// configs, Explain's Score is ScoreMiner's, and the printed (JSON) terms
// times their weights, added in §18's order with every product rounded,
// give each part and the total bit for bit.
func TestExplainReproducesScore(t *testing.T) {
	c, c2 := DefaultConfig(), DefaultConfig()
	c2.Cap, c2.AuxNeedsVerifiedRound = 1.5, false
	c2.GPUWeight, c2.CPUWeight, c2.RAMWeight, c2.StorageWeight = 0.4, 0.3, 0.2, 0.1
	c2.FP16Weight, c2.FP32Weight, c2.SustainedWeight, c2.PeakWeight = 0.35, 0.65, 0.55, 0.45
	if err := c2.Validate(); err != nil {
		t.Fatal(err)
	}
	ref := refAux(gpus(8, "NVIDIA H200"))
	ins := []Input{
		{Miner: "reference", Rounds: refRounds(), Hardware: ref, ProvenHost: ref},
		{Miner: "none"},
		{Miner: "host only", ProvenHost: ref},
		{Miner: "missed", Rounds: cat(refRounds(), missed(3)), Hardware: ref, ProvenHost: ref, Penalty: 0.5},
		{Miner: "failed", Rounds: cat(refRounds(), []Round{{Precision: FP16}}), Hardware: ref, Penalty: 0.25},
		{Miner: "probe and odd", Rounds: []Round{{Precision: FP16, TFLOPS: 1, Verified: true, Probe: true, ProvenMemoryBytes: 8e9},
			{Precision: 3, TFLOPS: 100, Verified: true}}, Hardware: Hardware{GPUNames: gpus(1, "RTX 4090")}},
		{Miner: "overclaim", Rounds: rounds(FP16, 80e9, 100, 110), Hardware: Hardware{GPUNames: gpus(1, "H200")}},
		{Miner: "bandwidth over held", Rounds: refRounds(), ProvenHost: Hardware{RAMBytes: 64e9, RAMGBps: 10.24,
			StorageBytes: 1e12, StorageMBps: 5000, RAMHeldBytes: 128e9}},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		ins = append(ins, randomInput(rng))
	}
	for _, cfg := range []Config{c, c2} {
		for _, in := range ins {
			b := Explain(cfg, in)
			if s := ScoreMiner(cfg, in); !reflect.DeepEqual(b.Score, s) {
				t.Fatalf("%s: Explain's score %+v, ScoreMiner's %+v", in.Miner, b.Score, s)
			}
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			var printed Breakdown
			if err := json.Unmarshal(raw, &printed); err != nil {
				t.Fatal(err)
			}
			if err := recompute(cfg, printed); err != nil {
				t.Fatalf("%s: %v\n%s", in.Miner, err, raw)
			}
		}
	}
}

// recompute checks b's figures against §18 written out term by term.
func recompute(c Config, b Breakdown) error {
	var errs []string
	same := func(what string, got, want float64) {
		if math.Float64bits(got) != math.Float64bits(want) {
			errs = append(errs, fmt.Sprintf("%s = %v, recomputed %v", what, got, want))
		}
	}
	weighed := func(ts ...Term) float64 {
		v := 0.0
		for _, t := range ts {
			same(t.Name+" contribution", t.Contribution, float64(t.Weight*t.Value))
			v += float64(t.Weight * t.Value)
		}
		return v
	}
	f16, f32 := b.Classes[0], b.Classes[1]
	same("fp16 raw", f16.Raw, float64(b.SustainedWeight*b.FP16Sustained)+float64(b.PeakWeight*b.FP16Peak))
	same("fp32 raw", f32.Raw, float64(b.SustainedWeight*b.FP32Sustained)+float64(b.PeakWeight*b.FP32Peak))
	for _, k := range b.Classes {
		same(k.Name+" value", k.Value, norm(k.Raw, k.Reference, k.Cap))
	}
	if w := f16.Weight + f32.Weight; w > 0 {
		same("throughput", b.Throughput, weighed(f16, f32)/w)
	}
	gpu, cpu, ram, disk := b.Parts[0], b.Parts[1], b.Parts[2], b.Parts[3]
	same("throughput term", gpu.Terms[0].Value, b.Throughput)
	same("memory term", gpu.Terms[1].Value, b.Memory)
	same("penalty", gpu.Penalty, b.Penalty)
	same("availability", gpu.Availability, b.Availability)
	same("gpu", b.GPU, weighed(gpu.Terms[0], gpu.Terms[1])*gpu.Availability*(1-gpu.Penalty))
	same("cpu", b.CPU, weighed(cpu.Terms[0])*cpu.Availability)
	same("ram", b.RAM, weighed(ram.Terms[0], ram.Terms[1])*ram.Availability)
	same("storage", b.Storage, weighed(disk.Terms[0], disk.Terms[1])*disk.Availability)
	for i, p := range b.Parts {
		same(p.Name+" value", p.Value, []float64{b.GPU, b.CPU, b.RAM, b.Storage}[i])
		same(p.Name+" contribution", p.Contribution, float64(p.Weight*p.Value))
	}
	same("total", b.Total, float64(gpu.Weight*b.GPU)+float64(cpu.Weight*b.CPU)+float64(ram.Weight*b.RAM)+float64(disk.Weight*b.Storage))
	// The weights printed are the config's.
	for _, w := range [][2]float64{{gpu.Weight, c.GPUWeight}, {cpu.Weight, c.CPUWeight}, {ram.Weight, c.RAMWeight},
		{disk.Weight, c.StorageWeight}, {gpu.Terms[0].Weight, c.ThroughputWeight}, {gpu.Terms[1].Weight, c.MemoryWeight},
		{ram.Terms[0].Weight, c.RAMCapacityWeight}, {ram.Terms[1].Weight, c.RAMBandwidthWeight},
		{disk.Terms[0].Weight, c.StorageSpeedWeight}, {disk.Terms[1].Weight, c.StorageCapacityWeight},
		{b.SustainedWeight, c.SustainedWeight}, {b.PeakWeight, c.PeakWeight}} {
		same("weight", w[0], w[1])
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// randomInput is a miner with a random mix of rounds, announced GPUs and
// proven host figures, some of them garbage (negative, NaN, +Inf).
func randomInput(rng *rand.Rand) Input {
	odd := func(v float64) float64 {
		return []float64{v, v, v, v, v, v, 0, -v, math.NaN(), math.Inf(1), v * 1e-9}[rng.IntN(11)]
	}
	classes := DefaultConfig().Classes
	in := Input{Miner: fmt.Sprint("random ", rng.Uint64())}
	for range rng.IntN(12) {
		in.Rounds = append(in.Rounds, Round{Precision: Precision(rng.IntN(4)), TFLOPS: odd(rng.Float64() * 8000),
			Verified: rng.IntN(4) > 0, Missed: rng.IntN(3) == 0, Probe: rng.IntN(6) == 0,
			ProvenMemoryBytes: uint64(rng.Float64() * 2e12)})
	}
	for range rng.IntN(9) {
		name := "Mystery GPU"
		if rng.IntN(8) > 0 {
			name = "NVIDIA " + classes[rng.IntN(len(classes))].Name
		}
		in.Hardware.GPUNames = append(in.Hardware.GPUNames, name)
	}
	if rng.IntN(4) > 0 {
		in.ProvenHost = Hardware{CPUCores: rng.IntN(200), CPUGHz: odd(rng.Float64() * 4),
			RAMBytes: uint64(rng.Float64() * 4e12), RAMGBps: odd(rng.Float64() * 20),
			StorageBytes: uint64(rng.Float64() * 60e12), StorageMBps: odd(rng.Float64() * 10000),
			RAMHeldBytes: uint64(rng.Float64() * 4e12), StorageHeldBytes: uint64(rng.Float64() * 60e12)}
	}
	in.Penalty = []float64{0, 0, 0.5, 1, 0.001, 2, math.NaN(), -1}[rng.IntN(8)]
	return in
}

// TestExplainUses: each round's use is how ScoreMiner counted it.
func TestExplainUses(t *testing.T) {
	rs := []Round{
		{Precision: FP16, TFLOPS: 500, Verified: true, ProvenMemoryBytes: 1e9},
		{Precision: FP32, TFLOPS: 400, Verified: true},
		{Precision: FP16, TFLOPS: 1, Verified: true, Probe: true, ProvenMemoryBytes: 2e9},
		{Precision: 7, TFLOPS: 900, Verified: true},
		{Precision: FP16, Missed: true},
		{Precision: FP32},
	}
	b := Explain(DefaultConfig(), Input{Miner: "m", Rounds: rs, Hardware: Hardware{GPUNames: gpus(1, "H200")}})
	want := []Use{UseScored, UseScored, UseProbe, UseUnknown, UseMissed, UseFailed}
	if !reflect.DeepEqual(b.Uses, want) {
		t.Fatalf("uses %v, want %v", b.Uses, want)
	}
	if b.Verified != 4 || b.Missed != 1 || b.Failures != 1 || b.FP16Peak != 500 || b.FP32Peak != 400 || b.ProvenMemoryBytes != 2e9 {
		t.Fatalf("counts: %+v", b.Score)
	}
	if b.Classes[0].Weight != 0.6 || b.Classes[1].Weight != 0.4 || b.Parts[0].Value != 0 || b.Parts[0].Penalty != 1 {
		t.Fatalf("a failed round zeroes the GPU part: %+v", b.Parts[0])
	}
	// Only fp16 measured: fp32 weighs 0 and throughput is fp16's value.
	b = Explain(DefaultConfig(), Input{Miner: "m", Rounds: rounds(FP16, 0, 2440)})
	if b.Classes[1].Weight != 0 || b.Throughput != b.Classes[0].Value || !near(b.Classes[0].Value, 0.5) {
		t.Fatalf("one class: %+v, throughput %v", b.Classes, b.Throughput)
	}
	if b.Parts[1].Note != "" {
		t.Fatalf("a verified round pays the host parts: %q", b.Parts[1].Note)
	}
	if b = Explain(DefaultConfig(), Input{Miner: "m", Rounds: missed(2), ProvenHost: refAux(nil)}); b.Parts[1].Availability != 0 || b.Parts[1].Note == "" {
		t.Fatalf("no verified round: host parts unpaid and say why: %+v", b.Parts[1])
	}
}
