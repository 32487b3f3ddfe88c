package plan

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
)

// Every CPU and RAM round Host plans is one HostAdmissible takes: any
// core count, round trip and measured step time, at the defaults and at
// the testnet's 1 ms host_max_round; the largest RAM rounds reach the
// growth bound, and every CPU round runs to the network's window, its
// root due by its end (SPEC §23.2).
func TestHostPlansAdmissible(t *testing.T) {
	short := config.DefaultConfig()
	short.Validator.HostMaxRound = config.Duration{Duration: time.Millisecond}
	miner := []byte("miner")
	reached := map[byte]bool{}
	for _, c := range []config.Config{config.DefaultConfig(), short} {
		for _, kind := range []byte{hostround.KindCPU, hostround.KindRAM} {
			bound := map[byte]float64{hostround.KindCPU: cpuwork.StepBoundNs, hostround.KindRAM: memwalk.StepBoundNs}[kind]
			for _, cores := range []uint32{0, 1, 4, 64, 4096} {
				ann := &pb.MinerAnnounce{Hardware: &pb.Hardware{CpuCores: cores}, RamItems: 1 << 20}
				for _, rtt := range []time.Duration{0, time.Millisecond, 50 * time.Millisecond, 400 * time.Millisecond, 3 * time.Second} {
					for _, stepNs := range []float64{0, bound / 1000, bound / 10, bound, 10 * bound} {
						p, err := Host(c, kind, peer.ID(miner), ann, PeriodEpoch(c.Network, 1), rtt, stepNs, rand.Reader)
						if err != nil {
							t.Fatal(err)
						}
						pr := p.Challenge.Proof
						if err := HostAdmissible(c.Validator, pr); err != nil {
							t.Fatalf("%s, %d cores, rtt %v, step %.0f ns: %v", pr.Name(), cores, rtt, stepNs, err)
						}
						if kind == hostround.KindCPU {
							checkWindowed(t, c.Validator, pr, rtt, p.RootBy)
							continue
						}
						if most := uint64(MaxGrowthAtBound * float64(c.Validator.HostMaxRound.Nanoseconds()) / bound); pr.Dims().Steps*2 > most && pr.Dims().Steps > c.Validator.HostRAMSteps {
							reached[kind] = true
						}
					}
				}
			}
		}
	}
	if !reached[hostround.KindRAM] {
		t.Errorf("no RAM plan grew to within half the growth bound")
	}
}

// checkWindowed: a planned CPU round runs to cfg's window for RunFor its
// round trip, its root due by the window's end and slack.
func checkWindowed(t *testing.T, cfg config.ValidatorConfig, pr hostround.Proof, rtt, rootBy time.Duration) {
	t.Helper()
	c, ok := hostround.Windowed(pr)
	switch {
	case !ok || c.Window() != cfg.HostCPUWindow.Duration:
		t.Fatalf("rtt %v: cpu round to a %v window", rtt, c.Window())
	case c.Run() != hostround.RunFor(c.Window(), rtt).Truncate(time.Millisecond):
		t.Fatalf("rtt %v: runs %v, want %v", rtt, c.Run(), hostround.RunFor(c.Window(), rtt))
	case rootBy > hostround.WindowEnd(c.Window())+hostround.WindowSlack(c.Window()):
		t.Fatalf("rtt %v: root due %v, past the window's end", rtt, rootBy)
	}
}

// A round with more chains or steps than any plan gives is refused: an
// owner's hour-long storage audit, or a CPU round of fixed steps or of
// another window or step scale than the network's.
func TestOversizedHostRoundsRefused(t *testing.T) {
	cfg := config.DefaultConfig().Validator
	ms := uint32(cfg.HostCPUWindow.Milliseconds())
	cpu := func(chains uint64, window uint32, scale uint8) hostround.Proof {
		return hostround.CPUProof{Params: &cpuwork.Params{Miner: []byte("m"), TableLog: cpuwork.DefaultTableLog,
			Shape: host.Shape{Chains: chains, Steps: 1 << 40, Segment: 1 << 30}, WindowMs: window, RunMs: window, ScaleLog: scale}}
	}
	audit := func(chains, steps uint64) hostround.Proof {
		return hostround.PlotProof{Audit: &plot.Audit{Shape: host.Shape{Chains: chains, Steps: steps, Segment: config.PlotSegment}}}
	}
	for _, c := range []struct {
		name string
		pr   hostround.Proof
		want string // "" admits
	}{
		{"cpu to the network's window", cpu(uint64(cfg.HostCPUMaxChains), ms, 0), ""},
		{"cpu of fixed steps", cpu(1, 0, 0), "fixed steps"},
		{"cpu to a longer window", cpu(1, ms+1, 0), fmt.Sprintf("%v window", cfg.HostCPUWindow.Duration+time.Millisecond)},
		{"cpu of scaled steps", cpu(1, ms, 1), "scaled 2^1"},
		{"cpu with a chain too many", cpu(uint64(cfg.HostCPUMaxChains)+1, ms, 0), "a plan gives at most"},
		{"an hour's storage audit", audit(1, hostround.MaxPlotWork), "storage"},
	} {
		err := HostAdmissible(cfg, c.pr)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
