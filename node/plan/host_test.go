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
// the testnet's 1 ms host_max_round; the largest reach the growth bound.
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
						if most := uint64(MaxGrowthAtBound * float64(c.Validator.HostMaxRound.Nanoseconds()) / bound); pr.Dims().Steps*2 > most && pr.Dims().Steps > hostSteps(c, kind) {
							reached[kind] = true
						}
					}
				}
			}
		}
	}
	if !reached[hostround.KindCPU] || !reached[hostround.KindRAM] {
		t.Errorf("no plan grew to within half the growth bound: %v", reached)
	}
}

func hostSteps(c config.Config, kind byte) uint64 {
	if kind == hostround.KindCPU {
		return c.Validator.HostCPUSteps
	}
	return c.Validator.HostRAMSteps
}

// A round with more chains or steps than any plan gives is refused: an
// owner's hour-long storage audit, or a CPU round past its growth bound.
func TestOversizedHostRoundsRefused(t *testing.T) {
	cfg := config.DefaultConfig().Validator
	most := uint64(MaxGrowthAtBound * float64(cfg.HostMaxRound.Nanoseconds()) / cpuwork.StepBoundNs)
	cpu := func(chains, steps uint64) hostround.Proof {
		return hostround.CPUProof{Params: &cpuwork.Params{Miner: []byte("m"), TableLog: cpuwork.DefaultTableLog,
			Shape: host.Shape{Chains: chains, Steps: steps, Segment: 1}}}
	}
	audit := func(chains, steps uint64) hostround.Proof {
		return hostround.PlotProof{Audit: &plot.Audit{Shape: host.Shape{Chains: chains, Steps: steps, Segment: config.PlotSegment}}}
	}
	for _, c := range []struct {
		name string
		pr   hostround.Proof
		want string // "" admits
	}{
		{"cpu at the growth bound", cpu(1, most), ""},
		{"cpu at its configured steps", cpu(uint64(cfg.HostCPUMaxChains), cfg.HostCPUSteps), ""},
		{"cpu past the growth bound", cpu(1, most+1), fmt.Sprintf("1×%d steps", most+1)},
		{"cpu with a chain too many", cpu(uint64(cfg.HostCPUMaxChains)+1, 16), "a plan gives at most"},
		{"an hour's storage audit", audit(1, hostround.MaxPlotWork), "storage"},
	} {
		err := HostAdmissible(cfg, c.pr)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
