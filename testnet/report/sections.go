package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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
	t := table{Head: []string{"epoch", "wall clock", "rounds verified", "rounds failed", "detections", "consensus identical"}}
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
		t.add(class, strconv.FormatUint(e.Epoch, 10), epochWindow(s, e.Epoch), strconv.Itoa(ver), strconv.Itoa(fail), strconv.Itoa(det), same)
	}
	return t
}

// detectionSummary counts detections per adversary class and epoch, with
// the first detection's time; classes never detected are marked.
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
		if first == nil {
			cells = append(cells, "0", "not detected", dash)
		} else {
			cells = append(cells, strconv.Itoa(count), num(first.AtSeconds, 1), strconv.FormatUint(first.Epoch, 10))
		}
		for _, e := range epochs {
			cells = append(cells, kindCounts(per[e]))
		}
		class := ""
		if first == nil {
			class = "fail"
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

// profitabilityTable renders the summary's "profitability" array, whatever
// its element type, from summary.json: one column per key in first-seen
// order. ok is false when the summary has none.
func profitabilityTable(summaryJSON []byte) (t table, ok bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(summaryJSON, &top) != nil {
		return t, false
	}
	raw := bytes.TrimSpace(top["profitability"])
	if len(raw) == 0 || raw[0] != '[' {
		return t, false
	}
	var rows []json.RawMessage
	if json.Unmarshal(raw, &rows) != nil || len(rows) == 0 {
		return t, false
	}
	col := map[string]int{}
	var cells []map[string]string
	for _, r := range rows {
		keys, vals, err := objectFields(r)
		if err != nil {
			return t, false
		}
		m := map[string]string{}
		for i, k := range keys {
			if _, ok := col[k]; !ok {
				col[k] = len(t.Head)
				t.Head = append(t.Head, k)
			}
			m[k] = jsonCell(vals[i])
		}
		cells = append(cells, m)
	}
	for _, m := range cells {
		r := make([]string, len(t.Head))
		for k, i := range col {
			r[i] = orDash(m[k])
		}
		t.add("", r...)
	}
	return t, true
}

// objectFields returns a JSON object's keys in order with their values.
func objectFields(obj json.RawMessage) (keys []string, vals []json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, tok.(string)), append(vals, v)
	}
	return keys, vals, nil
}

// jsonCell is a JSON value as a table cell: numbers to 4 significant
// digits, strings bare, anything else as JSON.
func jsonCell(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	switch x := x.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return string(v)
}
