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
// throughput, over one honest H200) against the validators' duty cycle,
// with random pauses and with the slot schedule. BENCHMARKS.md records
// its figures:
//
//	go test -run '^$' -bench Rounds -benchtime 1x -timeout 30m ./testnet/
func BenchmarkRounds(b *testing.B) {
	for _, c := range []struct {
		slots bool
		duty  float64
	}{{false, 0.1}, {false, 0.2}, {false, 0.5}, {true, 0.25}, {true, 0.5}, {true, 0.75}, {true, 0.95}} {
		schedule := "random"
		if c.slots {
			schedule = "slots"
		}
		duty := c.duty
		b.Run(fmt.Sprintf("%s/duty=%v", schedule, duty), func(b *testing.B) {
			for range b.N {
				cfg := DefaultConfig()
				cfg.SlotSchedule = c.slots
				cfg.Validators, cfg.Miners, cfg.Profiles = 2, 2, []string{"H200"}
				cfg.Adversaries = []string{"far", "timeshare"}
				cfg.Delays = map[string]time.Duration{"miner-2": 50 * time.Millisecond}
				cfg.DutyCycle = duty
				// Several rounds per validator and miner in each epoch:
				// random pauses need about 4 s ÷ duty, slots the default
				// 40 s (about 15 slots per validator and miner here).
				cfg.Epochs = 2
				if !c.slots {
					cfg.EpochLength = time.Duration(float64(4*time.Second) / duty)
				}
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
