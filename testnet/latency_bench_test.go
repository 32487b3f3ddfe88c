package testnet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pog-network/pog/testnet/adversary"
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
				for _, g := range s.TimeSharing {
					b.ReportMetric(g.ThroughputRatio, "timeshare-tflops-ratio")
					b.ReportMetric(100*g.DutyCycle, "duty-%")
				}
				if p, ok := adversary.ProfitOf(s, "timeshare"); ok {
					b.ReportMetric(p.Gain, "timeshare-gain")
				}
			}
		})
	}
}

// BenchmarkFarHost measures what distance costs a miner's host parts: one
// validator, an honest H200 and far (the same profile 200 ms away each
// way), with host rounds capped at the testnet's 1 ms (far's rounds cannot
// grow to 20 round trips) and at the production 10 s (they do, sized at
// far's measured step time: 8 s of one core per kind). It reports far's
// score over its twin's at the validator, the mean over the full epochs,
// and its measured throughput over the twin's. BENCHMARKS.md records its
// figures:
//
//	go test -run '^$' -bench FarHost -benchtime 1x -timeout 20m ./testnet/
func BenchmarkFarHost(b *testing.B) {
	for _, limit := range []time.Duration{time.Millisecond, 10 * time.Second} {
		b.Run(fmt.Sprintf("host-max-round=%v", limit), func(b *testing.B) {
			for range b.N {
				cfg := DefaultConfig()
				cfg.Validators, cfg.Miners, cfg.Profiles, cfg.Adversaries = 1, 1, []string{"H200"}, []string{"far"}
				cfg.HostMaxRound, cfg.Epochs, cfg.Out = limit, 2, b.TempDir()
				s, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				var sum float64
				for _, e := range s.Epochs {
					for _, sc := range e.Scores {
						sum += sc["far"] / sc["miner-1"]
					}
				}
				b.ReportMetric(sum/float64(len(s.Epochs)), "far/twin-score")
				for _, t := range s.Throughput {
					if t.Node == "far" {
						b.ReportMetric(t.Relative, "far/twin-tflops")
					}
				}
			}
		})
	}
}
