package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// view is the report's content, shared by report.md and report.html.
type view struct {
	Passed        bool
	Verdict       string // PASSED or FAILED
	ChecksSummary string
	Run           table
	Settings      table // the run's protocol settings against production
	Checks        table
	Nodes         table
	ScaleNote     string // what the TFLOPS columns are scaled by
	ProfitNote    string // the gains' baseline
	Profit        table
	EpochList     table // one row per epoch, with wall-clock times
	Epochs        []epochView
	Adversaries   table // detections per adversary class and epoch
	Detections    table
	FalsePos      table
	Gossip        table
	GossipNote    string
	Plots         []plotRef
}

type epochView struct {
	Epoch     uint64
	OfRun     uint64 // Epoch numbered from the run's first
	Window    string // wall-clock span
	Hash      string
	Identical bool
	Differs   []string // nodes computing another hash, and why (at most maxDiffers)
	Miners    table
	Trust     table
}

type plotRef struct {
	File, Alt     string
	Width, Height int
}

// table is plain text cells; each renderer escapes them. An empty Rows
// renders as "none".
type table struct {
	Head []string
	Rows []row
}

// row is a table row; Class ("ok" or "fail") colours it in HTML.
type row struct {
	Class string
	Cells []string
}

const dash = "—"

// maxDiffers bounds the nodes an epoch's view names as computing another
// consensus; the JSON summary names all.
const maxDiffers = 20

func (t *table) add(class string, cells ...string) {
	t.Rows = append(t.Rows, row{Class: class, Cells: cells})
}

// newView builds the report from s.
func newView(s *Summary) *view {
	nodes := nodeByName(s)
	v := &view{Passed: s.Passed, Verdict: "FAILED"}
	if s.Passed {
		v.Verdict = "PASSED"
	}
	perMiner := roundVerdicts(s)
	v.Run = runTable(s)
	v.Settings.Head = []string{"setting", "this run", "production default", "scale"}
	for _, st := range s.Settings {
		v.Settings.add("", st.Name, st.Run, st.Production, st.Scale)
	}
	v.ChecksSummary, v.Checks = checksTable(s)
	v.ScaleNote = scaleNote(s)
	v.Nodes = nodesTable(s, perMiner)
	v.ProfitNote, v.Profit = profitNote, profitTable(s)
	v.EpochList = epochsTable(s)
	for _, e := range sortedEpochs(s) {
		ev := epochTables(s, e, nodes)
		ev.Window, ev.OfRun = epochWindow(s, e.Epoch), runEpoch(s, e.Epoch)
		v.Epochs = append(v.Epochs, ev)
	}
	v.Adversaries = detectionSummary(s, nodes)
	v.Detections = detectionTable(s.Detections, nodes, "")
	v.FalsePos = detectionTable(s.FalsePositives, nodes, "fail")
	v.Gossip, v.GossipNote = gossipTable(s), gossipNote
	for _, pf := range plotFiles {
		v.Plots = append(v.Plots, plotRef{File: pf.file, Alt: pf.alt, Width: PNGWidth, Height: PNGHeight})
	}
	return v
}

// roundVerdicts counts each miner's verified and failed rounds.
func roundVerdicts(s *Summary) map[string]*Verdicts {
	perMiner := make(map[string]*Verdicts)
	for _, r := range s.Rounds {
		c := perMiner[r.Miner]
		if c == nil {
			c = new(Verdicts)
			perMiner[r.Miner] = c
		}
		if r.Verified {
			c.Verified++
		} else {
			c.Failed++
		}
	}
	return perMiner
}

// runTable is the run's parameters and totals.
func runTable(s *Summary) table {
	var checks []float64
	for _, r := range s.Rounds {
		if r.Verified {
			checks = append(checks, r.VerifyMS)
		}
	}
	verified := len(checks)
	honest, adversaries := 0, 0
	for _, n := range s.Nodes {
		if n.Role == "miner" {
			if n.Adversary == "" {
				honest++
			} else {
				adversaries++
			}
		}
	}
	t := table{Head: []string{"parameter", "value"}}
	t.add("", "seed", strconv.FormatInt(s.Seed, 10))
	t.add("", "validators", strconv.Itoa(s.Validators))
	t.add("", "miners", fmt.Sprintf("%d (%d honest, %d adversarial)", s.Miners, honest, adversaries))
	t.add("", "epoch length", orDash(s.EpochLength))
	t.add("", "duration", duration(s.DurationSeconds))
	t.add("", "nodes up and connected at", num(s.UpSeconds, 3)+" s")
	t.add("", "epochs closed", strconv.Itoa(len(s.Epochs)))
	t.add("", "rounds", fmt.Sprintf("%d (%d verified, %d failed)", len(s.Rounds), verified, len(s.Rounds)-verified))
	if verified > 0 {
		t.add("", "validators' checks of verified rounds", fmt.Sprintf("median %s ms, p99 %s ms, max %s ms (the CPU's queue included)",
			ms(percentile(checks, 50)), ms(percentile(checks, 99)), ms(percentile(checks, 100))))
	}
	for _, role := range []string{"validator", "miner"} {
		if row := storeRow(s, role); row != "" {
			t.add("", role+"s' stores after the run", row)
		}
	}
	t.add("", "detections", strconv.Itoa(len(s.Detections)))
	t.add("", "false positives", strconv.Itoa(len(s.FalsePositives)))
	return t
}

// storeRow is the median and largest store of role's nodes, and the
// median per epoch of the run's duration; "" if none was measured.
func storeRow(s *Summary, role string) string {
	var sizes []float64
	for _, n := range s.Nodes {
		if n.Role == role && n.StoreBytes > 0 {
			sizes = append(sizes, float64(n.StoreBytes))
		}
	}
	if len(sizes) == 0 {
		return ""
	}
	median := percentile(sizes, 50)
	row := "median " + bytesText(median) + ", max " + bytesText(percentile(sizes, 100))
	if el, err := time.ParseDuration(s.EpochLength); err == nil && s.DurationSeconds > 0 {
		row += " (median " + bytesText(median/(s.DurationSeconds/el.Seconds())) + " an epoch of the run)"
	}
	return row
}

// bytesText is n bytes in kB or MB.
func bytesText(n float64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", n/1e3)
	}
	return fmt.Sprintf("%.2f MB", n/1e6)
}

// checksTable is every check, and how many passed.
func checksTable(s *Summary) (string, table) {
	t := table{Head: []string{"", "check", "detail"}}
	ok := 0
	for _, c := range s.Checks {
		if c.OK {
			ok++
			t.add("ok", "✓", c.Name, c.Detail)
		} else {
			t.add("fail", "✗", c.Name, c.Detail)
		}
	}
	return fmt.Sprintf("%d of %d checks passed", ok, len(s.Checks)), t
}

// nodesTable is one row per node: its profile, the throughput it
// simulated and measured, its rounds and its mean incentive.
func nodesTable(s *Summary, perMiner map[string]*Verdicts) table {
	measured := measuredTFLOPS(s)
	t := table{Head: []string{"node", "role", "profile", "adversary", "profile TFLOPS", "sim TFLOPS", "measured TFLOPS", "measured ÷ scale",
		"verified", "failed", "mean incentive", "peer ID"}}
	for _, n := range s.Nodes {
		adv, class := orDash(n.Adversary), ""
		if n.Role == "miner" && n.Adversary == "" {
			adv = "honest"
		} else if n.Adversary != "" {
			class = "adv"
		}
		meas, hw, ver, fail := dash, dash, dash, dash
		if m, ok := measured[n.Name]; ok {
			meas = eng(m)
			if s.Scale > 0 {
				hw = num(m/s.Scale, 1)
			}
		}
		if c := perMiner[n.Name]; c != nil {
			ver, fail = strconv.Itoa(c.Verified), strconv.Itoa(c.Failed)
		}
		sim := dash
		if n.SimTFLOPS != 0 {
			sim = eng(n.SimTFLOPS)
		}
		t.add(class, n.Name, n.Role, orDash(n.Profile), adv, optNum(n.ProfileTFLOPS, 1), sim,
			meas, hw, ver, fail, meanIncentive(s, n), shortID(n.PeerID))
	}
	return t
}

// gossipNote says what the gossip latency measures.
const gossipNote = "A challenge from its publication at its validator to its arrival at each other validator (miners take their challenges on the round stream and relay no round gossip)."

// gossipTable is the gossip latency's percentiles, empty without samples.
func gossipTable(s *Summary) table {
	p50, p90, p99 := latency(s)
	t := table{Head: []string{"samples", "min (ms)", "p50 (ms)", "p90 (ms)", "p99 (ms)", "max (ms)"}}
	if len(s.Gossip.Samples) > 0 || p50 != 0 || p90 != 0 || p99 != 0 {
		t.add("", strconv.Itoa(len(s.Gossip.Samples)), ms(percentile(s.Gossip.Samples, 0)),
			ms(p50), ms(p90), ms(p99), ms(percentile(s.Gossip.Samples, 100)))
	}
	return t
}

// epochTables builds one epoch's miner and trust tables.
func epochTables(s *Summary, e *Epoch, nodes map[string]Node) epochView {
	ev := epochView{Epoch: e.Epoch, Hash: e.ConsensusHash, Identical: e.Identical, Differs: e.Differs}
	if len(ev.Differs) > maxDiffers {
		ev.Differs = append(slices.Clone(ev.Differs[:maxDiffers]), fmt.Sprintf("and %d more", len(e.Differs)-maxDiffers))
	}

	mset := make(map[string]bool)
	vset := make(map[string]bool)
	for _, m := range []map[string]float64{e.Consensus, e.Incentive} {
		for k := range m {
			mset[k] = true
		}
	}
	for k := range e.Verdicts {
		mset[k] = true
	}
	for _, vm := range []map[string]map[string]float64{e.Scores, e.Weights} {
		for val, m := range vm {
			vset[val] = true
			for k := range m {
				mset[k] = true
			}
		}
	}
	for k := range e.Trust {
		vset[k] = true
	}
	ms, vals := ordered(s, mset), ordered(s, vset)

	ev.Miners.Head = []string{"miner", "profile", "adversary", "verified", "failed"}
	for _, val := range vals {
		ev.Miners.Head = append(ev.Miners.Head, "score by "+val)
	}
	ev.Miners.Head = append(ev.Miners.Head, "consensus weight", "incentive")
	for _, m := range ms {
		n, known := nodes[m]
		adv, class := "honest", ""
		if !known {
			adv = dash
		} else if n.Adversary != "" {
			adv, class = n.Adversary, "adv"
		}
		cells := []string{m, orDash(n.Profile), adv, dash, dash}
		if c, ok := e.Verdicts[m]; ok {
			cells[3], cells[4] = strconv.Itoa(c.Verified), strconv.Itoa(c.Failed)
		}
		for _, val := range vals {
			cells = append(cells, lookup(e.Scores[val], m))
		}
		cons := dash
		if w, ok := epochWeight(e, m); ok {
			cons = num(w, 4)
		}
		cells = append(cells, cons, lookup(e.Incentive, m))
		ev.Miners.add(class, cells...)
	}

	ev.Trust.Head = []string{"validator", "trust"}
	for _, val := range vals {
		ev.Trust.add("", val, lookup(e.Trust, val))
	}
	return ev
}

func detectionTable(ds []Detection, nodes map[string]Node, class string) table {
	t := table{Head: []string{"adversary", "node", "epoch", "round", "kind", "detail", "at (s)"}}
	for _, d := range ds {
		adv := d.Adversary
		if adv == "" {
			adv = nodes[d.Node].Adversary
		}
		round := dash
		if d.Round != 0 {
			round = strconv.FormatUint(d.Round, 10)
		}
		t.add(class, orDash(adv), d.Node, strconv.FormatUint(d.Epoch, 10), round, d.Kind, d.Detail, num(d.AtSeconds, 1))
	}
	return t
}

// meanIncentive is a miner's consensus incentive averaged over the
// summarised epochs (absent counts as 0), a dash for other nodes.
func meanIncentive(s *Summary, n Node) string {
	if n.Role != "miner" || len(s.Epochs) == 0 {
		return dash
	}
	sum := 0.0
	for _, e := range s.Epochs {
		sum += e.Incentive[n.Name]
	}
	return num(sum/float64(len(s.Epochs)), 4)
}

func lookup(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return num(v, 4)
	}
	return dash
}

func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// optNum is num, or a dash for zero (an unset omitempty field).
func optNum(v float64, prec int) string {
	if v == 0 {
		return dash
	}
	return num(v, prec)
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmtMS(v)
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// duration is seconds with a rounded human form, e.g. "95.0 s (1m35s)".
func duration(sec float64) string {
	out := num(sec, 1) + " s"
	if finite(sec) && sec >= 60 && sec < 1e9 {
		out += " (" + time.Duration(sec*float64(time.Second)).Round(time.Second).String() + ")"
	}
	return out
}

// shortID abbreviates a peer ID to its first 8 and last 6 characters.
func shortID(id string) string {
	if r := []rune(id); len(r) > 20 {
		return string(r[:8]) + "…" + string(r[len(r)-6:])
	}
	return orDash(id)
}
