package report

import (
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// evilName is a miner name that must come out escaped in report.html.
const evilName = `miner-6<script>alert("x")</script>`

// sample is a run of 2 validators and 6 miners (two adversaries) over 3
// epochs.
func sample() *Summary {
	s := &Summary{
		Seed:            42,
		Validators:      2,
		Miners:          6,
		EpochLength:     "30s",
		DurationSeconds: 95.5,
		StartedAt:       "2025-02-19T21:19:50Z",
		Scale:           0.01,
		Nodes: []Node{
			{Name: "validator-1", PeerID: "12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefV1", Role: "validator", StoreBytes: 4e6},
			{Name: "validator-2", PeerID: "12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefV2", Role: "validator", StoreBytes: 6e6},
			{Name: "miner-1", PeerID: "12D3KooWm1", Role: "miner", StoreBytes: 9000, Profile: "H200", ProfileTFLOPS: 610, SimTFLOPS: 6.1},
			{Name: "miner-2", PeerID: "12D3KooWm2", Role: "miner", Profile: "H100", ProfileTFLOPS: 570, SimTFLOPS: 5.7},
			{Name: "miner-3", PeerID: "12D3KooWm3", Role: "miner", Profile: "A100", ProfileTFLOPS: 238.8, SimTFLOPS: 2.388},
			{Name: "miner-4", PeerID: "12D3KooWm4", Role: "miner", Profile: "RTX4090", ProfileTFLOPS: 157, SimTFLOPS: 1.57},
			{Name: "miner-5", PeerID: "12D3KooWm5", Role: "miner", Profile: "CPU", Adversary: "lazy", ProfileTFLOPS: 8, SimTFLOPS: 0.08},
			{Name: evilName, PeerID: "12D3KooWm6", Role: "miner", Profile: "H100", Adversary: "tamper", ProfileTFLOPS: 570, SimTFLOPS: 5.7},
		},
		Gossip: Latency{},
		Checks: []Check{
			{Name: "honest miners ranked by profile", OK: true, Detail: "H200 > H100 > A100 > RTX4090 > CPU"},
			{Name: "every adversary detected", OK: true, Detail: "lazy after 12.5 s, tamper after 14.0 s"},
			{Name: "no false positives", OK: true, Detail: "0 honest rounds failed"},
			{Name: "consensus identical on all nodes", OK: true, Detail: "3 of 3 epochs"},
			{Name: "audit clean", OK: true, Detail: "pog audit exit 0 on every node"},
		},
		Passed: true,
	}
	validators := []string{"validator-1", "validator-2"}
	honestScore := map[string]float64{"miner-1": 0.125, "miner-2": 0.118, "miner-3": 0.061, "miner-4": 0.039}
	rng := rand.New(rand.NewPCG(1, 2))
	at := 0.0
	for ei := range 3 {
		epoch := uint64(58_000_000 + ei)
		e := Epoch{
			Epoch:         epoch,
			Scores:        map[string]map[string]float64{},
			Weights:       map[string]map[string]float64{},
			Consensus:     map[string]float64{},
			Incentive:     map[string]float64{},
			Trust:         map[string]float64{"validator-1": 0.5, "validator-2": 0.5},
			ConsensusHash: fmt.Sprintf("%064x", 0xabcdef00+ei),
			Identical:     true,
			Verdicts:      map[string]Verdicts{},
		}
		total := 0.0
		for _, sc := range honestScore {
			total += sc
		}
		for _, v := range validators {
			e.Scores[v] = map[string]float64{evilName: 0, "miner-5": 0}
			e.Weights[v] = map[string]float64{evilName: 0, "miner-5": 0}
			for m, sc := range honestScore {
				e.Scores[v][m] = sc
				e.Weights[v][m] = sc / total
			}
		}
		for m, sc := range honestScore {
			e.Consensus[m] = sc / total
			e.Incentive[m] = sc / total
		}
		e.Consensus[evilName], e.Incentive[evilName] = 0, 0
		e.Consensus["miner-5"], e.Incentive["miner-5"] = 0, 0
		for _, n := range s.Nodes[2:] {
			for ri := range 2 {
				for _, v := range validators {
					at += 0.4
					r := Round{Epoch: epoch, Round: uint64(ri + 1), Validator: v, Miner: n.Name, Verified: true,
						TFLOPS: n.SimTFLOPS * (0.9 + 0.1*rng.Float64()), VerifyMS: float64(10 * (ri + 1)), AtSeconds: at}
					if n.Adversary != "" && !(ei == 0 && ri == 0) {
						r.Verified, r.Reason, r.TFLOPS = false, "tile 17: Freivalds check failed", 0
					}
					s.Rounds = append(s.Rounds, r)
					c := e.Verdicts[n.Name]
					if r.Verified {
						c.Verified++
					} else {
						c.Failed++
					}
					e.Verdicts[n.Name] = c
				}
			}
		}
		s.Epochs = append(s.Epochs, e)
	}
	s.Detections = []Detection{
		{Adversary: "lazy", Node: "miner-5", Epoch: 58_000_000, Round: 2, Kind: "failed-round", Detail: "tile 17: Freivalds check failed", AtSeconds: 12.5},
		{Adversary: "lazy", Node: "miner-5", Epoch: 58_000_000, Round: 2, Kind: "flag", Detail: "validator-1 flagged miner-5", AtSeconds: 12.9},
		{Adversary: "tamper", Node: evilName, Epoch: 58_000_000, Round: 2, Kind: "failed-round", Detail: "root mismatch", AtSeconds: 14.0},
		{Adversary: "tamper", Node: evilName, Epoch: 58_000_001, Kind: "peer-score", Detail: "score −100 on validator-2", AtSeconds: 40.2},
		{Adversary: "lazy", Node: "miner-5", Epoch: 58_000_001, Kind: "clipped", Detail: "weight clipped to 0", AtSeconds: 61.0},
		{Adversary: "tamper", Node: evilName, Epoch: 58_000_002, Kind: "audit", Detail: "audit: bad proof in round 3", AtSeconds: 90.0},
	}
	// tamper earns nothing against miner-2, the honest H100; lazy, a CPU,
	// has no honest miner of its hardware.
	s.Profitability = []Profit{{Adversary: "tamper", RealProfile: "H100", HonestIncentive: 0.3036, Honest: []string{"miner-2"},
		Limit: 1.05, Enforced: true}}
	for range 200 {
		s.Gossip.Samples = append(s.Gossip.Samples, 2+rng.ExpFloat64()*6)
	}
	s.Gossip.P50 = percentile(s.Gossip.Samples, 50)
	s.Gossip.P90 = percentile(s.Gossip.Samples, 90)
	s.Gossip.P99 = percentile(s.Gossip.Samples, 99)
	return s
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkFiles asserts every file was written, non-empty, and every PNG
// decodes at the expected size.
func checkFiles(t *testing.T, dir string, paths []string) {
	t.Helper()
	want := []string{SummaryFile, MarkdownFile, HTMLFile}
	for _, pf := range plotFiles {
		want = append(want, pf.file)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
		if filepath.Dir(p) != filepath.Clean(dir) {
			t.Errorf("%s written outside %s", p, dir)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("paths %v, want %v", got, want)
	}
	for _, name := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
		if !strings.HasSuffix(name, ".png") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != PNGWidth || b.Dy() != PNGHeight {
			t.Errorf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), PNGWidth, PNGHeight)
		}
	}
}

func TestWrite(t *testing.T) {
	s := sample()
	dir := filepath.Join(t.TempDir(), "out", "run-1") // created by Write
	paths, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, paths)

	var back Summary
	if err := json.Unmarshal([]byte(read(t, dir, SummaryFile)), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, s) {
		t.Errorf("summary.json does not round-trip:\n got %+v\nwant %+v", back, *s)
	}

	md := read(t, dir, MarkdownFile)
	if !strings.Contains(md, "**PASSED**") || strings.Contains(md, "FAILED") {
		t.Error("report.md does not say PASSED (only)")
	}
	for _, c := range s.Checks {
		if !strings.Contains(md, "| ✓ | "+c.Name+" |") {
			t.Errorf("report.md lacks check %q", c.Name)
		}
	}
	for _, want := range []string{"lazy", "tamper", "| seed | 42 |", "### Epoch 3 of the run (58000002)", "## False positives\n\nnone",
		"0000abcdef02`", "| validator-1 | 0.5000 |", "| miner-1 | H200 | honest | 4 | 0 |", "\\<script\\>",
		"| validators' checks of verified rounds | median 10.0 ms, p99 20.0 ms, max 20.0 ms",
		"| validators' stores after the run | median 5.00 MB, max 6.00 MB (median 1.57 MB an epoch of the run) |",
		"| miners' stores after the run | median 9.0 kB, max 9.0 kB (median 2.8 kB an epoch of the run) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, pf := range plotFiles {
		if !strings.Contains(md, "]("+pf.file+")") {
			t.Errorf("report.md lacks the image link to %s", pf.file)
		}
	}

	html := read(t, dir, HTMLFile)
	for _, want := range []string{"<!DOCTYPE html>", "<html", "</html>", "PASSED", "<style>",
		"miner-6&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "lazy", "tamper"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(html, "<script") {
		t.Error("report.html has an unescaped <script>")
	}
	for _, pf := range plotFiles {
		if !strings.Contains(html, `<img src="`+pf.file+`"`) {
			t.Errorf("report.html lacks <img> for %s", pf.file)
		}
	}
}

func TestWriteFailed(t *testing.T) {
	s := sample()
	s.Passed = false
	s.Checks[2] = Check{Name: "no false positives", OK: false, Detail: "1 honest round failed"}
	s.Epochs[1].Identical = false
	s.FalsePositives = []Detection{{Node: "miner-2", Epoch: 58_000_001, Round: 1, Kind: "failed-round", Detail: "deadline | missed", AtSeconds: 33}}
	dir := t.TempDir()
	paths, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, paths)
	md := read(t, dir, MarkdownFile)
	for _, want := range []string{"**FAILED** — 4 of 5 checks passed", "| ✗ | no false positives | 1 honest round failed |",
		"identical on all nodes: ✗ **no**", `deadline \| missed`} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md, "PASSED") {
		t.Error("report.md says PASSED for a failed run")
	}
	html := read(t, dir, HTMLFile)
	if !strings.Contains(html, `class="verdict fail">FAILED`) || !strings.Contains(html, `<tr class="fail"><td>✗</td>`) {
		t.Error("report.html does not show the failure")
	}
}

func TestWriteEmpty(t *testing.T) {
	dir := t.TempDir()
	paths, err := Write(dir, &Summary{})
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, paths)
	md := read(t, dir, MarkdownFile)
	for _, want := range []string{"**FAILED** — 0 of 0 checks passed", "No epoch closed.", "No latency samples.", "](gossip.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var back Summary
	if err := json.Unmarshal([]byte(read(t, dir, SummaryFile)), &back); err != nil || !reflect.DeepEqual(back, Summary{}) {
		t.Errorf("empty summary.json round trip: %v, %+v", err, back)
	}
}

// TestWriteOddData feeds degenerate values the plots must survive: one
// epoch with only incentives, a lone latency value repeated, NaNs, zero
// throughput, a detection of an unlisted node and narrow TFLOPS range.
func TestWriteOddData(t *testing.T) {
	s := &Summary{
		Nodes:  []Node{{Name: "m", Role: "miner", Profile: "CPU", SimTFLOPS: 1}},
		Epochs: []Epoch{{Epoch: 7, Incentive: map[string]float64{"m": 1, "ghost": 0}}},
		Rounds: []Round{
			{Miner: "m", Verified: true, TFLOPS: 0.9},
			{Miner: "m", Verified: true, TFLOPS: math.NaN()},
			{Miner: "m", Verified: true, TFLOPS: 0},
		},
		Detections:     []Detection{{Node: "stranger", Kind: "flag"}},
		FalsePositives: []Detection{{Node: "m", Kind: "audit", AtSeconds: 3}},
		Gossip:         Latency{Samples: []float64{5, 5, 5, math.Inf(1)}},
	}
	dir := t.TempDir()
	paths, err := Write(dir, s)
	// summary.json cannot hold NaN or Inf: that one file fails, the rest
	// are written.
	if err == nil || !strings.Contains(err.Error(), SummaryFile) {
		t.Fatalf("err = %v, want a summary.json error", err)
	}
	if len(paths) != len(plotFiles)+2 {
		t.Fatalf("wrote %v", paths)
	}
	md := read(t, dir, MarkdownFile)
	for _, want := range []string{"| m | CPU | honest | — | — | 1.0000 | 1.0000 |", "(unspecified)", "| 4 | 5.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := Write(dir, nil); err == nil {
		t.Error("nil summary accepted")
	}
}

func TestPercentile(t *testing.T) {
	vs := []float64{4, 1, 3, 2, math.NaN()}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {50, 2.5}, {100, 4}, {90, 3.7}} {
		if got := percentile(vs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}
