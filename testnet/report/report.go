package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Files Write produces, besides the plots (plotFiles).
const (
	SummaryFile  = "summary.json"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Write writes summary.json, report.md, report.html and the PNG plots into
// dir (created if missing) and returns the paths written. A file that cannot
// be produced does not stop the others: the error joins every failure and
// the paths are those written successfully.
func Write(dir string, s *Summary) ([]string, error) {
	if s == nil {
		return nil, errors.New("report: nil summary")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var written []string
	var errs []error
	put := func(name string, data []byte, err error) {
		path := filepath.Join(dir, name)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("report: %s: %w", name, err))
			return
		}
		written = append(written, path)
	}

	data, err := json.MarshalIndent(s, "", "  ")
	put(SummaryFile, append(data, '\n'), err)
	for _, pf := range plotFiles {
		data, err := pf.draw(s).png()
		put(pf.file, data, err)
	}
	v := newView(s)
	put(MarkdownFile, markdown(v), nil)
	data, err = renderHTML(v)
	put(HTMLFile, data, err)
	return written, errors.Join(errs...)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// median of the finite values in vs; NaN if there are none.
func median(vs []float64) float64 { return percentile(vs, 50) }

// percentile returns the q-th percentile (0–100) of the finite values in vs,
// interpolating linearly between closest ranks; NaN if there are none.
func percentile(vs []float64, q float64) float64 {
	xs := make([]float64, 0, len(vs))
	for _, v := range vs {
		if finite(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	pos := q / 100 * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return xs[lo] + (xs[hi]-xs[lo])*(pos-float64(lo))
}

// latency returns the gossip percentiles: the summary's own when it has
// any, computed from the samples otherwise.
func latency(s *Summary) (p50, p90, p99 float64) {
	g := s.Gossip
	if g.P50 != 0 || g.P90 != 0 || g.P99 != 0 || len(g.Samples) == 0 {
		return g.P50, g.P90, g.P99
	}
	return percentile(g.Samples, 50), percentile(g.Samples, 90), percentile(g.Samples, 99)
}

// nodeByName indexes the summary's nodes.
func nodeByName(s *Summary) map[string]Node {
	m := make(map[string]Node, len(s.Nodes))
	for _, n := range s.Nodes {
		m[n.Name] = n
	}
	return m
}

// ordered returns the names in set, those of s.Nodes first in node order,
// then the rest sorted.
func ordered(s *Summary, set map[string]bool) []string {
	out := make([]string, 0, len(set))
	seen := make(map[string]bool, len(set))
	for _, n := range s.Nodes {
		if set[n.Name] && !seen[n.Name] {
			out = append(out, n.Name)
			seen[n.Name] = true
		}
	}
	var rest []string
	for name := range set {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// miners returns every miner: nodes with role miner and every name that
// appears in an epoch's results.
func miners(s *Summary) []string {
	set := make(map[string]bool)
	for _, n := range s.Nodes {
		if n.Role == "miner" {
			set[n.Name] = true
		}
	}
	for _, e := range s.Epochs {
		for _, m := range []map[string]float64{e.Consensus, e.Incentive} {
			for name := range m {
				set[name] = true
			}
		}
		for name := range e.Verdicts {
			set[name] = true
		}
	}
	return ordered(s, set)
}

// epochWeight is a miner's consensus weight in e: Consensus, or Incentive
// when the epoch has no Consensus.
func epochWeight(e *Epoch, miner string) (float64, bool) {
	m := e.Consensus
	if len(m) == 0 {
		m = e.Incentive
	}
	w, ok := m[miner]
	return w, ok
}

// runEpoch numbers epoch e from the run's epochs: 0 is the one the run
// started in (from StartedAt and EpochLength), or else the first
// summarised one.
func runEpoch(s *Summary, e uint64) uint64 {
	first := e
	for i := range s.Epochs {
		first = min(first, s.Epochs[i].Epoch)
	}
	l, err := time.ParseDuration(s.EpochLength)
	start, serr := time.Parse(time.RFC3339Nano, s.StartedAt)
	if err == nil && serr == nil && l > 0 && start.UnixNano() > 0 {
		first = min(first, uint64(start.UnixNano()/int64(l)))
	}
	return e - first
}

// sortedEpochs returns the epochs ordered by number, without touching s.
func sortedEpochs(s *Summary) []*Epoch {
	out := make([]*Epoch, len(s.Epochs))
	for i := range s.Epochs {
		out[i] = &s.Epochs[i]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Epoch < out[j].Epoch })
	return out
}

// measuredTFLOPS is the median measured TFLOPS of each miner's verified
// rounds (positive, finite values only).
func measuredTFLOPS(s *Summary) map[string]float64 {
	by := make(map[string][]float64)
	for _, r := range s.Rounds {
		if r.Verified && finite(r.TFLOPS) && r.TFLOPS > 0 {
			by[r.Miner] = append(by[r.Miner], r.TFLOPS)
		}
	}
	out := make(map[string]float64, len(by))
	for m, vs := range by {
		out[m] = median(vs)
	}
	return out
}

// adversaryOf is a detection's adversary class: its own, else its node's.
func adversaryOf(d Detection, nodes map[string]Node) string {
	if d.Adversary != "" {
		return d.Adversary
	}
	if a := nodes[d.Node].Adversary; a != "" {
		return a
	}
	return "(unspecified)"
}

// adversaryClasses returns the adversary classes of the nodes and of the
// detections, sorted.
func adversaryClasses(s *Summary, nodes map[string]Node) []string {
	set := make(map[string]bool)
	for _, n := range s.Nodes {
		if n.Adversary != "" {
			set[n.Adversary] = true
		}
	}
	for _, d := range s.Detections {
		set[adversaryOf(d, nodes)] = true
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// minerLabel is "name (profile[, +delay][, adversary])".
func minerLabel(name string, nodes map[string]Node) string {
	n := nodes[name]
	var parts []string
	for _, p := range []string{n.Profile, delayNote(n.AddedLatencyMs), n.Adversary} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

// delayNote is "+200 ms", or empty for an undelayed node.
func delayNote(ms float64) string {
	if ms == 0 {
		return ""
	}
	return "+" + strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
}
