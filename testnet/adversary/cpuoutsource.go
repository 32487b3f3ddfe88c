package adversary

import (
	"fmt"
	"strings"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/report"
)

// The cpu-outsource adversary is one host run as CPUOutsourceIdentities
// identities, as timeshare runs one: they share its GPU and split its RAM
// and storage, and every identity announces all its cores, whose CPU host
// rounds one server of those cores answers (SPEC §23.7: a CPU round lasts
// milliseconds, so one server can answer each identity's in turn). Only a
// simulated run models the server (virtual time).
const CPUOutsourceIdentities = 4

// CPUServer is one host's cores answering several identities' CPU host
// rounds: a round holds all of them for its chains' waves, as a
// production round (a chain per announced core) would, and rounds queue
// one after another in the order they arrive, each at the host's speed.
type CPUServer struct {
	dev   *Device // its unit of work is a chain step
	cores uint64
}

// NewCPUServer is the server of host h's cores, in virtual time.
func NewCPUServer(h *pb.Hardware) *CPUServer {
	stepNs := scoring.CPUCyclesPerStep / h.CpuGhz
	return &CPUServer{dev: NewSharedDevice(1e-3 / stepNs).InVirtualTime(true), cores: max(1, uint64(h.CpuCores))}
}

// HostTime is identity key's host proof time: a CPU proof waits for the
// server and runs on it, other kinds take base's time.
func (c *CPUServer) HostTime(key string, base func(string, host.Shape) time.Duration) func(string, host.Shape) time.Duration {
	return func(kind string, sh host.Shape) time.Duration {
		if kind != "cpu" {
			return base(kind, sh)
		}
		waves := (sh.Chains + c.cores - 1) / c.cores
		now := time.Now()
		return c.dev.reserve(now, float64(waves*sh.Steps), key).Sub(now)
	}
}

// CPUOutsourceCheck compares what the cpu-outsource identities' CPU host
// rounds proved together with what honest miners of their profile proved
// (each validator's mean credited core·GHz of an epoch, the CPU part's
// figure, averaged over validators and epochs): at most the identity
// count times one host's. Host slots start every identity's round at one
// instant, so the server answers them in turn, the m-th at m times one
// round's time (SPEC §16: about 2.07 hosts at 4 identities), not yet
// within §16's time-sharing bound. Its incentive is its gain.
func CPUOutsourceCheck(s *report.Summary) report.Check {
	name := fmt.Sprintf("cpu-outsource's %d identities prove at most %d hosts' CPU core·GHz (SPEC §16, §23.7; answered in turn from one instant, §16's time-sharing bound not met)",
		CPUOutsourceIdentities, CPUOutsourceIdentities)
	sum, ref, profile, honest := groupAgainstHonest(s, "cpu-outsource", func(e report.Epoch) map[string]float64 { return e.HostCPU })
	if ref <= 0 || sum <= 0 {
		return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("no CPU part proven: group %.4g, honest %.4g (%s)", sum, ref, strings.Join(honest, ", "))}
	}
	ratio := sum / ref
	return report.Check{Name: name, OK: ratio <= CPUOutsourceIdentities*MaxGain,
		Detail: fmt.Sprintf("%.4g core·GHz proven by the group against %.4g by honest %s (%s): ratio %.2f", sum, ref, profile, strings.Join(honest, ", "), ratio)}
}

// CPUOutsourceLeak is what SPEC §23.7's bound adds to the time-sharing
// limit of cpu-outsource's incentive: k − 1 more of the honest host's CPU
// parts (its proven core·GHz normalised and weighted as c scores it),
// over the honest host's score.
func CPUOutsourceLeak(s *report.Summary, c scoring.Config) float64 {
	_, _, honest := groupOf(s, "cpu-outsource")
	cpu, score := 0.0, 0.0
	for _, e := range s.Epochs {
		for _, h := range honest {
			cpu += c.CPUWeight * min(c.Cap, e.HostCPU[h]/(float64(c.Reference.CPUCores)*c.Reference.CPUGHz))
			for _, v := range e.Scores {
				score += v[h] / float64(len(e.Scores))
			}
		}
	}
	if score <= 0 {
		return 0
	}
	return float64(CPUOutsourceIdentities-1) * cpu / score
}

// groupOf is adversary's identities, their profile and the undelayed,
// unloaded honest miners of it.
func groupOf(s *report.Summary, adversary string) (group []string, profile string, honest []string) {
	for _, n := range s.Nodes {
		if n.Adversary == adversary {
			group, profile = append(group, n.Name), n.Profile
		}
	}
	for _, n := range s.Nodes {
		if n.Role == "miner" && n.Adversary == "" && n.AddedLatencyMs == 0 && !n.Loaded && n.Profile == profile {
			honest = append(honest, n.Name)
		}
	}
	return group, profile, honest
}

// groupAgainstHonest is a per-miner figure (of is each epoch's, by miner
// name) summed over adversary's identities, and the mean of it over the
// honest miners of their profile, each averaged over the epochs; with the
// profile and those honest miners.
func groupAgainstHonest(s *report.Summary, adversary string, of func(report.Epoch) map[string]float64) (sum, ref float64, profile string, honest []string) {
	group, profile, honest := groupOf(s, adversary)
	for _, m := range group {
		sum += meanOf(s, func(e report.Epoch) float64 { return of(e)[m] })
	}
	for _, h := range honest {
		ref += meanOf(s, func(e report.Epoch) float64 { return of(e)[h] }) / float64(len(honest))
	}
	return sum, ref, profile, honest
}

// meanOf is a figure averaged over the summarised epochs (an epoch
// without one counts 0).
func meanOf(s *report.Summary, f func(report.Epoch) float64) float64 {
	sum := 0.0
	for _, e := range s.Epochs {
		sum += f(e)
	}
	return sum / float64(max(1, len(s.Epochs)))
}
