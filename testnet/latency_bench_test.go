package testnet

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkRounds measures issue 10's two distortions on a small network,
// one run per duty cycle: two validators; honest H200 miners at 0 and
// 50 ms added latency and far (200 ms); the timeshare adversary's three
// H200 identities on one device. It reports measured ÷ true throughput at
// each latency and timeshare's gain (summed incentive, and summed measured
// throughput, over one honest H200) against the validators' duty cycle.
// BENCHMARKS.md records its figures:
//
//	go test -run '^$' -bench Rounds -benchtime 1x -timeout 30m ./testnet/
func BenchmarkRounds(b *testing.B) {
	for _, duty := range []float64{0.05, 0.1, 0.2, 0.35, 0.5} {
		b.Run(fmt.Sprintf("duty=%v", duty), func(b *testing.B) {
			for range b.N {
				cfg := DefaultConfig()
				cfg.Validators, cfg.Miners, cfg.Profiles = 2, 2, []string{"H200"}
				cfg.Adversaries = []string{"far", "timeshare"}
				cfg.Delays = map[string]time.Duration{"miner-2": 50 * time.Millisecond}
				cfg.DutyCycle = duty
				// Several rounds per validator and miner in each epoch.
				cfg.Epochs, cfg.EpochLength = 2, time.Duration(float64(4*time.Second)/duty)
				cfg.Out = b.TempDir()
				s, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range s.Throughput {
					b.ReportMetric(t.Ratio, fmt.Sprintf("measured/true@%.0fms", t.AddedLatencyMs))
					if t.Reference != "" {
						b.ReportMetric(t.Relative, fmt.Sprintf("vs-0ms@%.0fms", t.AddedLatencyMs))
					}
				}
				for _, g := range s.Gains {
					b.ReportMetric(g.Gain, "timeshare-gain")
					b.ReportMetric(g.ThroughputGain, "timeshare-tflops-gain")
					b.ReportMetric(100*g.DutyCycle, "duty-%")
				}
			}
		})
	}
}
