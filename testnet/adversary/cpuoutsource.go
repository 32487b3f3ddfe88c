package adversary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/report"
)

// The cpu-outsource adversary is one host run as CPUOutsourceIdentities
// identities, as timeshare runs one: they share its GPU and split its RAM
// and storage, and every identity announces all its cores, whose CPU host
// rounds one server of those cores answers. Host slots start every
// identity's round at one instant and each runs to the network's window
// (SPEC §23.2), so the server answers them in turn: the first for its
// window, the second for the window's slack. Only a simulated run models the
// server (virtual time).
const CPUOutsourceIdentities = 4

// MaxCPUShareGain is SPEC §23.2's bound on what identities sharing one
// CPU prove together against one honest host: 1 + 1/19 + 1/40 of the
// server's rate, against an honest host's 0.995 of its rate (its run less
// its stop margin), 1.083.
const MaxCPUShareGain = (1 + 1.0/19 + 1.0/40) / 0.995

// CPUServer is one host's cores answering several identities' windowed
// CPU host rounds, one after another in the order they arrive (by
// identity within an instant), each at the host's speed.
type CPUServer struct {
	stepNs  float64
	cores   uint64
	mu      sync.Mutex
	free    time.Time
	pending []*cpuJob
}

// cpuJob is one identity's round on the server.
type cpuJob struct {
	key        string
	p          *cpuwork.Params
	start, end time.Time
	steps      uint64
	done       time.Time
}

// NewCPUServer is the server of host h's cores, in virtual time.
func NewCPUServer(h *pb.Hardware) *CPUServer {
	return &CPUServer{stepNs: scoring.CPUCyclesPerStep / h.CpuGhz, cores: max(1, uint64(h.CpuCores))}
}

// HostWindow is identity key's windowed CPU rounds on the server
// (miner.Hooks.HostWindow), each from when the server is free: the first
// to its window's end (credited over the window, a longer run would earn
// nothing more), the next until its root would be late (the window's
// slack, less a millisecond); the rest run nothing.
func (c *CPUServer) HostWindow(key string) func(*cpuwork.Params, time.Time) (uint64, time.Time) {
	return func(p *cpuwork.Params, stop time.Time) (uint64, time.Time) {
		j := &cpuJob{key: key, p: p, start: time.Now(), end: stop.Add(miner.WindowStop)}
		c.mu.Lock()
		c.pending = append(c.pending, j)
		// Virtual time moves on only once every goroutine waits: after
		// this nanosecond every request of the instant is pending.
		c.mu.Unlock()
		time.Sleep(time.Nanosecond)
		c.mu.Lock()
		defer c.mu.Unlock()
		slices.SortFunc(c.pending, func(x, y *cpuJob) int { return cmp.Or(x.start.Compare(y.start), strings.Compare(x.key, y.key)) })
		for _, q := range c.pending {
			from := q.start
			if c.free.After(from) { // another's round ran first
				from = c.free
				q.end = q.end.Add(hostround.WindowSlack(q.p.Window()) - time.Millisecond)
			}
			q.steps, q.done = windowSteps(q.p, from, q.end, c.stepNs, c.cores)
			if q.steps > 0 {
				c.free = q.done
			}
		}
		c.pending = nil
		return j.steps, j.done
	}
}

// CPUOutsourceCheck compares what the cpu-outsource identities' CPU host
// rounds proved together with what honest miners of their profile proved
// (each validator's mean credited core·GHz of an epoch, the CPU part's
// figure, averaged over validators and epochs): at most MaxCPUShareGain
// of one host's. Its incentive is its gain.
func CPUOutsourceCheck(s *report.Summary) report.Check {
	name := fmt.Sprintf("cpu-outsource's %d identities, answered in turn by one server, prove together at most %.2f of one host's CPU core·GHz (SPEC §23.2)",
		CPUOutsourceIdentities, MaxCPUShareGain)
	sum, ref, profile, honest := groupAgainstHonest(s, "cpu-outsource", func(e report.Epoch) map[string]float64 { return e.HostCPU })
	if ref <= 0 || sum <= 0 {
		return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("no CPU part proven: group %.4g, honest %.4g (%s)", sum, ref, strings.Join(honest, ", "))}
	}
	ratio := sum / ref
	return report.Check{Name: name, OK: ratio <= MaxCPUShareGain,
		Detail: fmt.Sprintf("%.4g core·GHz proven by the group against %.4g by honest %s (%s): ratio %.2f", sum, ref, profile, strings.Join(honest, ", "), ratio)}
}

// CPUOutsourceLeak is what SPEC §23.2's bound adds to the time-sharing
// limit of cpu-outsource's incentive: MaxCPUShareGain − 1 more of the
// honest host's CPU part (its proven core·GHz normalised and weighted as c
// scores it), over the honest host's score.
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
	return (MaxCPUShareGain - 1) * cpu / score
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
