package plan

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node/internal/nodetest"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
)

func TestPlanChallenge(t *testing.T) {
	miner := nodetest.Peer(t)
	cfg := config.LocalConfig().Validator // size 256, k 256, 16 KiB tiles (t = 64)
	tests := []struct {
		name     string
		ann      *pb.MinerAnnounce
		size     uint32
		subs     int
		prec     proof.Precision
		errMatch string
	}{
		{"capacity allows the full size", &pb.MinerAnnounce{Precisions: []uint32{1, 2}, MaxOutputBytes: 1 << 30}, 256, 1, proof.FP16, ""},
		{"capacity caps the size", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 4 * 128 * 128}, 128, 1, proof.FP16, ""},
		{"one sub-challenge per GPU", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 1 << 30, Gpus: []*pb.GPU{{}, {}, {}}}, 256, 3, proof.FP16, ""},
		{"the validator's class, announced or not", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 1 << 30}, 256, 1, proof.FP32, ""},
		{"too small to hold two tiles", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 4 * 64 * 64}, 0, 0, proof.FP16, "cannot hold"},
	}
	for _, tt := range tests {
		pl, err := Challenge(cfg, miner, tt.ann, 0, tt.prec, 0, 0, 0, bytes.NewReader(bytes.Repeat([]byte{7, 1, 2}, 1000)))
		if tt.errMatch != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
				t.Errorf("%s: got %v, want error %q", tt.name, err, tt.errMatch)
			}
			continue
		}
		if err == nil && (!pl.Probe || pl.MinTimed != 0) {
			t.Errorf("%s: without a measurement, probe %v, min_timed %v: want a probe, untimed", tt.name, pl.Probe, pl.MinTimed)
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(pl.Params) != tt.subs {
			t.Fatalf("%s: %d sub-challenges, want %d", tt.name, len(pl.Params), tt.subs)
		}
		nonces := map[[32]byte]bool{}
		for _, p := range pl.Params {
			if p.M != tt.size || p.N != tt.size || p.Precision != tt.prec || string(p.Miner) != string(miner) {
				t.Errorf("%s: got %v %d×%d for %s", tt.name, p.Precision, p.M, p.N, p.Miner)
			}
			if p.OutputBytes() > tt.ann.MaxOutputBytes {
				t.Errorf("%s: output %d exceeds capacity", tt.name, p.OutputBytes())
			}
			nonces[p.Nonce] = true
		}
		if len(nonces) != tt.subs {
			t.Errorf("%s: sub-challenges share a nonce", tt.name)
		}
		if pl.Steps != cfg.MinSteps || pl.StepTime != 0 || pl.Deadline != cfg.Deadline.Duration {
			t.Errorf("%s: a probe of %d steps (%v each, deadline %v)", tt.name, pl.Steps, pl.StepTime, pl.Deadline)
		}
		if want := min(66, pl.Steps*tt.subs*int(pl.Params[0].Tiles())); pl.Samples != want {
			t.Errorf("%s: %d samples, want %d", tt.name, pl.Samples, want)
		}
	}
}

// TestPlanSizing: after a probe, a round lasts about its target at the
// miner's last measured throughput, in at least MinSteps steps each longer
// than about 1.25 round trips, and never shorter than MinRTTMultiple round trips.
func TestPlanSizing(t *testing.T) {
	miner := nodetest.Peer(t)
	cfg := config.DefaultConfig().Validator
	gpu := &pb.MinerAnnounce{Precisions: []uint32{1, 2}, MaxOutputBytes: 256 << 30, Gpus: []*pb.GPU{{Name: "H200"}}}
	cpuAnn := &pb.MinerAnnounce{Precisions: []uint32{1, 2}, MaxOutputBytes: 1 << 30}
	rnd := bytes.NewReader(bytes.Repeat([]byte{9, 4, 1}, 100000))
	for _, c := range []struct {
		name   string
		ann    *pb.MinerAnnounce
		tflops float64
		rtt    time.Duration
		target time.Duration
	}{
		{"H200 nearby", gpu, 600, time.Millisecond, 10 * time.Second},
		{"H200 far", gpu, 600, 400 * time.Millisecond, 10 * time.Second},
		{"H200 very far", gpu, 600, time.Second, 20 * time.Second},
		{"CPU", cpuAnn, 1, 10 * time.Millisecond, 2 * time.Second},
		{"slow CPU", cpuAnn, 0.001, 10 * time.Millisecond, 2 * time.Second},
	} {
		c := c
		pl, err := Challenge(cfg, miner, c.ann, 0, proof.FP16, c.tflops, c.tflops, c.rtt, rnd)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := pl.Params[0]
		step := time.Duration(p.FLOPs() / (c.tflops * 1e12) * float64(time.Second))
		total := time.Duration(pl.Steps) * step
		want := max(c.target, time.Duration(float64(cfg.MinSteps)*1.25*float64(c.rtt)))
		switch {
		case pl.Steps < cfg.MinSteps || pl.Steps > cfg.MaxSteps:
			t.Errorf("%s: %d steps", c.name, pl.Steps)
		case step < time.Duration(1.2*float64(c.rtt)):
			t.Errorf("%s: step of %v is shorter than 1.2 round trips of %v", c.name, step, c.rtt)
		case c.name != "slow CPU" && (total < want*7/10 || total > want*13/10):
			t.Errorf("%s: %d steps of %v (%v) for a %v target (%d×%d×%d batch %d)", c.name, pl.Steps, step, total, c.target, p.M, p.K, p.N, p.Batch)
		case pl.FirstRootBy >= pl.Deadline || pl.FirstRootBy > cfg.FirstRootSlack.Duration+3*step+c.rtt:
			t.Errorf("%s: first root due after %v of a %v deadline", c.name, pl.FirstRootBy, pl.Deadline)
		case p.OutputBytes() > c.ann.MaxOutputBytes:
			t.Errorf("%s: output %d over capacity", c.name, p.OutputBytes())
		}
		if c.name == "CPU" && (p.M == cfg.Size || p.K < 512) {
			t.Errorf("%s: a CPU step of %d×%d×%d is not balanced", c.name, p.M, p.K, p.N)
		}
		if pl.StepTime != step {
			t.Errorf("%s: expected step time %v, computed %v", c.name, pl.StepTime, step)
		}
		if pl.Probe {
			t.Errorf("%s: a sized round marked a probe", c.name)
		}
		if want := time.Duration(pl.Steps-1) * step; pl.MinTimed != want {
			t.Errorf("%s: steps 1..D−1 timed over at least %v, want their expected %v", c.name, pl.MinTimed, want)
		}
	}
}

func TestNextGap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d, n = time.Second, 20000
	for _, duty := range []float64{0.1, 0.5, 0.9} {
		var sum time.Duration
		for range n {
			g := NextGap(r, d, duty)
			if g < 0 || g > time.Duration(2*float64(d)*(1-duty)/duty)+1 {
				t.Fatalf("gap %v out of range", g)
			}
			sum += g
		}
		busy := float64(d) / (float64(d) + float64(sum)/n)
		if busy < duty*0.97 || busy > duty*1.03 {
			t.Errorf("duty %v: busy %.3f of the time", duty, busy)
		}
	}
	if NextGap(r, d, 1) != 0 {
		t.Error("full duty cycle pauses")
	}
}

// TestSizingTFLOPS: a miner waiting for beacons (root intervals σ, ρ, σ,
// …) is sized at its step time σ; one that was not, at what was measured,
// also when its round trip is overstated.
func TestSizingTFLOPS(t *testing.T) {
	const ms = int64(time.Millisecond)
	steady := func(gap int64) []int64 { return arrivalsOf(22, func(int) int64 { return gap }) }
	alternating := func(sigma, rho int64) []int64 {
		return arrivalsOf(22, func(i int) int64 {
			if i%2 == 0 {
				return sigma
			}
			return rho
		})
	}
	for _, c := range []struct {
		name     string
		rtt      time.Duration
		arrivals []int64
		speedup  float64 // over the sustained figure
	}{
		{"not waiting: steps longer than the round trip", 400 * time.Millisecond, steady(500 * ms), 1},
		{"waiting: σ = 100 ms at 400 ms", 400 * time.Millisecond, alternating(100*ms, 400*ms), 2.5},
		{"waiting, short intervals stretched by a loaded validator: 2p − ρ", 400 * time.Millisecond, alternating(60*ms, 360*ms), 6.333},
		{"round trip overstated under load, steady steps", 100 * time.Millisecond, steady(50 * ms), 1},
		{"bounded by maxSpeedup", 400 * time.Millisecond, alternating(ms, 400*ms), MaxSpeedup},
		{"too few steps", time.Second, steady(10 * ms)[:3], 1},
	} {
		const sustained = 0.03
		got := SizingTFLOPS(sustained, c.rtt, c.arrivals) / sustained
		// Alternating intervals average slightly above (σ+ρ)/2 over an odd count.
		if math.Abs(got-c.speedup) > 0.03*c.speedup {
			t.Errorf("%s: %.3f× the sustained figure, want %.3f×", c.name, got, c.speedup)
		}
	}
	if got := SizingTFLOPS(0, time.Second, steady(10*ms)); got != 0 {
		t.Errorf("no measurement: %v", got)
	}
}

// arrivalsOf is n root arrivals, the i-th interval gap(i) after the last.
func arrivalsOf(n int, gap func(i int) int64) []int64 {
	out := []int64{gap(0)}
	for i := 1; i < n; i++ {
		out = append(out, out[i-1]+gap(i))
	}
	return out
}

// TestFarStepFillsK: when the capacity caps the batches, K grows past the
// configured K (up to the exactness limit) so that a far miner's step
// still outlasts 1.25 round trips; the deadlines assume the slower floor.
func TestFarStepFillsK(t *testing.T) {
	cfg := config.LocalConfig().Validator
	cfg.K, cfg.RoundTarget = 32, config.Duration{Duration: time.Second}
	ann := &pb.MinerAnnounce{Precisions: []uint32{uint32(proof.FP16)}, MaxOutputBytes: 4 << 20, Gpus: []*pb.GPU{{}}}
	const tflops = 2.8e-4
	rtt := 400 * time.Millisecond
	rnd := func() *bytes.Reader { return bytes.NewReader(bytes.Repeat([]byte{7, 1, 2}, 1000)) }
	pl, err := Challenge(cfg, nodetest.Peer(t), ann, 0, proof.FP16, tflops, tflops, rtt, rnd())
	if err != nil {
		t.Fatal(err)
	}
	p := pl.Params[0]
	step := time.Duration(p.FLOPs() / (tflops * 1e12) * float64(time.Second))
	// 1.25 round trips less K's rounding down (one part in K).
	if p.K <= cfg.K || p.OutputBytes() > ann.MaxOutputBytes || step < rtt*5/4*time.Duration(p.K)/time.Duration(p.K+1) {
		t.Errorf("K=%d batch=%d output %d bytes: step %v at %v round trip", p.K, p.Batch, p.OutputBytes(), step, rtt)
	}
	slow, err := Challenge(cfg, nodetest.Peer(t), ann, 0, proof.FP16, tflops, tflops/2, rtt, rnd())
	if err != nil {
		t.Fatal(err)
	}
	if slow.Deadline <= pl.Deadline {
		t.Errorf("deadline %v with a floor at half the estimate, want more than %v", slow.Deadline, pl.Deadline)
	}
}

// TestStepFillsBudget: whatever the budget, a step takes at least 90 % of
// it (halving alone leaves as little as half, and a round that short
// leaves its slot's device time to a time-sharing identity).
func TestStepFillsBudget(t *testing.T) {
	shape := proof.Params{Precision: proof.FP16, Batch: 1, M: 1024, K: 32, N: 1024, Tile: 32}
	for flops := 2 * shape.FLOPs() / 64; flops < shape.FLOPs(); flops *= 1.07 {
		for _, capacity := range []uint64{1 << 30, 3 << 20} {
			p := FitStep(shape, flops, capacity, proof.FP16.MaxK())
			if p.FLOPs() > flops || p.FLOPs() < 0.9*flops || p.OutputBytes() > capacity || p.M%p.Tile != 0 || p.N%p.Tile != 0 {
				t.Errorf("budget %.3g, capacity %d: %d×%d×%d batch %d, %.3g FLOPs, %d output bytes",
					flops, capacity, p.M, p.K, p.N, p.Batch, p.FLOPs(), p.OutputBytes())
			}
		}
	}
}

// TestPlanStepsFloor: however many GPUs a miner announces, a round keeps
// at least min_steps steps within the round's roots (bursting gains at most
// 1/(D − 2)), and a sub-challenge's output stays within its announced GPUs'
// class memory.
func TestPlanStepsFloor(t *testing.T) {
	cfg := config.DefaultConfig().Validator
	rnd := bytes.NewReader(bytes.Repeat([]byte{5, 3, 8}, 100000))
	for _, n := range []int{1, 8, 11, 12, 16} {
		ann := &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: proof.MaxOutputBytes, Gpus: make([]*pb.GPU, n)}
		for _, tflops := range []float64{0, 600 * float64(n)} {
			pl, err := Challenge(cfg, nodetest.Peer(t), ann, 24e9, proof.FP16, tflops, tflops, time.Second, rnd)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Steps < cfg.MinSteps || pl.Steps*len(pl.Params) > proof.MaxRoundRoots || len(pl.Params) > n {
				t.Errorf("%d GPUs at %v TFLOPS: %d steps of %d sub-challenges", n, tflops, pl.Steps, len(pl.Params))
			}
			if out := pl.Params[0].OutputBytes(); out > 24e9 {
				t.Errorf("%d GPUs: output %d over the class memory", n, out)
			}
		}
	}
}

// TestProbeEdge: a probe is 4 × 4 tiles, and at least 256 values an edge
// where tiles are small, within the size that fits the miner's capacity.
func TestProbeEdge(t *testing.T) {
	miner := nodetest.Peer(t)
	ann := &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 1 << 30}
	for _, tt := range []struct {
		tileBytes  int
		size, edge uint32
	}{
		{4 * 16 * 16, 1024, 256},    // 16-value tiles: 16 × 16 of them
		{4 * 32 * 32, 1024, 256},    // 8 × 8
		{4 * 64 * 64, 1024, 256},    // 4 × 4, as before
		{4 * 128 * 128, 16384, 512}, // production: 4 × 4 tiles
		{4 * 16 * 16, 128, 128},     // the size bounds it
	} {
		cfg := config.LocalConfig().Validator
		cfg.TileBytes, cfg.Size = tt.tileBytes, tt.size
		pl, err := Challenge(cfg, miner, ann, 0, proof.FP16, 0, 0, 0, bytes.NewReader(make([]byte, 1<<10)))
		if err != nil {
			t.Fatal(err)
		}
		if p := pl.Params[0]; !pl.Probe || p.M != tt.edge || p.N != tt.edge {
			t.Errorf("%d-byte tiles, size %d: probe %v of %d×%d, want %d×%d", tt.tileBytes, tt.size, pl.Probe, p.M, p.N, tt.edge, tt.edge)
		}
	}
}
