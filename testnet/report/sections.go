package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// eng writes v in engineering notation: three significant digits, the
// exponent a multiple of 3 ("210e-6", "1.57", "4.56e3").
func eng(v float64) string {
	if !finite(v) {
		return dash
	}
	if v == 0 {
		return "0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(v))/3)) * 3
	m := v / math.Pow10(exp)
	s := strconv.FormatFloat(m, 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(m))))), 64)
	if a := math.Abs(mustFloat(s)); a >= 1000 { // 999.6 rounds up into the next power
		exp += 3
		s = strconv.FormatFloat(m/1000, 'f', 2, 64)
	}
	if exp == 0 {
		return s
	}
	return s + "e" + strconv.Itoa(exp)
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// scaleNote states the simulation scale of the TFLOPS columns.
func scaleNote(s *Summary) string {
	if s.Scale <= 0 {
		return s.HostScale
	}
	return strings.TrimSpace(fmt.Sprintf("Simulated GPUs: each miner's CPU backend is paced to its profile's TFLOPS × %s, so sim and measured TFLOPS are "+
		"tiny; \"measured ÷ scale\" is the measured throughput in the profile's units. %s", eng(s.Scale), s.HostScale))
}

// epochWindow is an epoch's wall-clock span in UTC and, when the run's
// start is known, its offset into the run.
func epochWindow(s *Summary, e uint64) string {
	l, err := time.ParseDuration(s.EpochLength)
	if err != nil || l <= 0 || e > math.MaxInt64/uint64(l) {
		return dash
	}
	from, to := time.Unix(0, int64(e)*int64(l)).UTC(), time.Unix(0, int64(e+1)*int64(l)).UTC()
	out := from.Format("15:04:05") + "–" + to.Format("15:04:05") + " UTC"
	if start, err := time.Parse(time.RFC3339Nano, s.StartedAt); err == nil {
		out += fmt.Sprintf(" (%s to %s s into the run)", num(from.Sub(start).Seconds(), 1), num(to.Sub(start).Seconds(), 1))
	}
	return out
}

// epochsTable is one line per epoch: when, what was decided, what caught.
func epochsTable(s *Summary) table {
	t := table{Head: []string{"epoch of the run", "epoch", "wall clock", "rounds verified", "rounds failed", "detections", "consensus identical"}}
	for _, e := range sortedEpochs(s) {
		ver, fail := 0, 0
		for _, c := range e.Verdicts {
			ver += c.Verified
			fail += c.Failed
		}
		det := 0
		for _, d := range s.Detections {
			if d.Epoch == e.Epoch {
				det++
			}
		}
		same, class := "✓ yes", ""
		if !e.Identical {
			same, class = "✗ no", "fail"
		}
		t.add(class, strconv.FormatUint(runEpoch(s, e.Epoch), 10), strconv.FormatUint(e.Epoch, 10), epochWindow(s, e.Epoch), strconv.Itoa(ver), strconv.Itoa(fail), strconv.Itoa(det), same)
	}
	return t
}

// detectionSummary counts detections per adversary class and epoch, with
// the first detection's time; classes never detected are marked as
// missed, or as not meant to be detected where the run judges them by pay.
func detectionSummary(s *Summary, nodes map[string]Node) table {
	var epochs []uint64
	seen := map[uint64]bool{}
	for _, d := range s.Detections {
		if !seen[d.Epoch] {
			seen[d.Epoch] = true
			epochs = append(epochs, d.Epoch)
		}
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i] < epochs[j] })
	t := table{Head: []string{"adversary", "nodes", "detections", "first detected (s)", "first epoch"}}
	for _, e := range epochs {
		t.Head = append(t.Head, "epoch "+strconv.FormatUint(e, 10))
	}
	for _, a := range adversaryClasses(s, nodes) {
		var names []string
		for _, n := range s.Nodes {
			if n.Adversary == a {
				names = append(names, n.Name)
			}
		}
		var first *Detection
		per := map[uint64]map[string]int{} // epoch → kind → count
		count := 0
		for i, d := range s.Detections {
			if adversaryOf(d, nodes) != a {
				continue
			}
			count++
			if per[d.Epoch] == nil {
				per[d.Epoch] = map[string]int{}
			}
			per[d.Epoch][d.Kind]++
			if first == nil || d.AtSeconds < first.AtSeconds {
				first = &s.Detections[i]
			}
		}
		cells := []string{a, orDash(strings.Join(names, ", "))}
		class := ""
		switch {
		case first == nil && slices.Contains(s.JudgedByPay, a):
			cells = append(cells, "0", "not detected (by design: judged by what it earns)", dash)
		case first == nil:
			cells, class = append(cells, "0", "not detected", dash), "fail"
		default:
			cells = append(cells, strconv.Itoa(count), num(first.AtSeconds, 1), strconv.FormatUint(first.Epoch, 10))
		}
		for _, e := range epochs {
			cells = append(cells, kindCounts(per[e]))
		}
		t.add(class, cells...)
	}
	return t
}

// kindCounts is "12 failed-round, 1 flag", or a dash.
func kindCounts(m map[string]int) string {
	if len(m) == 0 {
		return dash
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for i, k := range kinds {
		kinds[i] = strconv.Itoa(m[k]) + " " + k
	}
	return strings.Join(kinds, ", ")
}
