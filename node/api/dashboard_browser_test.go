package api

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/epoch"
)

// The dashboard in headless Chromium: these tests serve the API and the
// page from a fixture, let the page's script fetch and render, and read the
// result from the DOM and a screenshot. Without a Chromium they skip,
// unless POG_REQUIRE_CHROMIUM=1 (CI, where it is installed) makes that a
// failure.

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("POG_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("POG_REQUIRE_CHROMIUM=1 but no chromium, chromium-browser or google-chrome on PATH")
	}
	t.Skip("no Chromium on PATH (apt-get install chromium): the dashboard is not checked in a browser")
	return ""
}

// browse runs headless Chromium on the page with one more flag (what to
// produce) and returns its standard output.
func browse(t *testing.T, bin, flag, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=8000", "--window-size=1400,2200", flag, url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", flag, err, stderr.Bytes())
	}
	return out
}

// minerFixture is the fixture as miners[0] sees it: its own rounds in
// its snapshot, and a store holding evidence and records that name it.
func minerFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.snap.ID, f.snap.Role = f.miners[0], node.RoleMiner
	return f
}

// renderedDOM serves f's API and dashboard and returns the DOM after the
// script ran.
func renderedDOM(t *testing.T, bin string, f *fixture) (string, string) {
	t.Helper()
	srv := httptest.NewServer(New(Options{Live: f, Store: f.st, Version: "test"}))
	t.Cleanup(srv.Close)
	dom := string(browse(t, bin, "--dump-dom", srv.URL+"/"))
	if !strings.Contains(dom, `data-loaded="1"`) {
		t.Fatalf("the dashboard did not finish loading:\n%s", dom)
	}
	return dom, srv.URL
}

var (
	tagRE  = regexp.MustCompile(`<[^>]*>`)
	cellRE = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// rows returns the cells' text of each row of table id's body.
func rows(t *testing.T, dom, id string) [][]string {
	t.Helper()
	body := regexp.MustCompile(`(?s)<table id="` + id + `">.*?<tbody>(.*?)</tbody>`).FindStringSubmatch(dom)
	if body == nil {
		t.Fatalf("no table %s in the DOM", id)
	}
	var out [][]string
	for _, tr := range strings.Split(body[1], "</tr>") {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(tr, -1) {
			cells = append(cells, strings.TrimSpace(tagRE.ReplaceAllString(c[1], "")))
		}
		if cells != nil {
			out = append(out, cells)
		}
	}
	return out
}

// element returns the markup inside the element with id.
func element(t *testing.T, dom, tag, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<` + tag + ` id="` + id + `"[^>]*>(.*?)</` + tag + `>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s#%s in the DOM", tag, id)
	}
	return m[1]
}

// TestDashboardShowsMinersOwnWork: a miner's dashboard lists its rounds
// (newest first, with validator, verdict and TFLOPS), charts its verified
// TFLOPS, lists its host rounds, and shows its score breakdown and its
// validators' weights of it; the screenshot shows the chart drawn.
func TestDashboardShowsMinersOwnWork(t *testing.T) {
	bin := chromium(t)
	f := minerFixture(t)
	dom, base := renderedDOM(t, bin, f)
	played := f.snap.Played
	got := rows(t, dom, "own-rounds")
	if len(got) != len(played) {
		t.Fatalf("own rounds table: %d rows, want %d: %q", len(got), len(played), got)
	}
	verified := 0
	for i, p := range played {
		row := got[len(played)-1-i]
		want := []string{fmt.Sprint(p.Epoch), fmt.Sprint(p.Round), "…" + p.Validator.String()[len(p.Validator.String())-8:], p.Verdict}
		if p.Probe {
			want[1] += " (probe)"
		}
		tflops := ""
		if p.Verdict == "verified" {
			tflops, verified = strconv.FormatFloat(p.TFLOPS, 'f', -1, 64), verified+1
		}
		if !slices.Equal(row[1:5], want) || row[7] != p.Reason || !sameNumber(row[5], tflops) {
			t.Errorf("own round %d: row %q, want %q, TFLOPS %s, reason %q", p.Round, row, want, tflops, p.Reason)
		}
	}
	chart := element(t, dom, "svg", "tflops-chart")
	if n := strings.Count(chart, "<circle"); n != verified || strings.Contains(chart, "no data yet") {
		t.Errorf("TFLOPS chart: %d points, want %d (one per verified round):\n%s", n, verified, chart)
	}
	if s := element(t, dom, "p", "tflops-summary"); !strings.Contains(s, "latest 0.000200 TFLOPS (round 50") {
		t.Errorf("TFLOPS summary: %q", s)
	}
	host := rows(t, dom, "host-rounds")
	if len(host) != 2 || host[1][2] != "cpu" || host[1][6] != "served" || host[0][2] != "ram" || host[0][6] != f.snap.HostPlayed[1].Error {
		t.Errorf("host rounds table: %q", host)
	}
	checkScore(t, dom, f)
	checkScreenshot(t, bin, base, chart)
}

// checkScore: the breakdown's parts are the API's, and the one validator's
// weight of the miner is listed.
func checkScore(t *testing.T, dom string, f *fixture) {
	t.Helper()
	score := getJSON[epoch.MinerScore](t, New(Options{Live: f, Store: f.st}), "/api/v1/miners/"+f.miners[0].String()+"/score")
	parts := rows(t, dom, "score-parts")
	if len(parts) != len(score.Parts) {
		t.Fatalf("score parts: %q, the API's %+v", parts, score.Parts)
	}
	for i, p := range score.Parts {
		if parts[i][0] != p.Name || !sameNumber(parts[i][5], strconv.FormatFloat(p.Contribution, 'g', -1, 64)) {
			t.Errorf("score part %d: %q, the API's %+v", i, parts[i], p)
		}
	}
	if w := rows(t, dom, "own-weights"); len(w) != 1 || !strings.HasSuffix(f.validator.String(), strings.TrimPrefix(w[0][0], "…")) {
		t.Errorf("weights by validator: %q", w)
	}
}

// checkScreenshot: the TFLOPS series' colour (taken from the chart's DOM,
// and in no other chart) covers the pixels its line and points need.
func checkScreenshot(t *testing.T, bin, base, chart string) {
	t.Helper()
	m := regexp.MustCompile(`stroke="#([0-9a-f]{6})"`).FindStringSubmatch(chart)
	if m == nil {
		t.Fatalf("the TFLOPS chart has no series stroke:\n%s", chart)
	}
	c, _ := strconv.ParseUint(m[1], 16, 32)
	want := [3]int{int(c >> 16), int(c >> 8 & 0xff), int(c & 0xff)}
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	browse(t, bin, "--screenshot="+shot, base+"/")
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	n := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(int(r>>8), want[0]) && near(int(g>>8), want[1]) && near(int(b>>8), want[2]) {
				n++
			}
		}
	}
	// Two points of radius 3 and the line between them: well over 40 pixels.
	if n < 40 {
		t.Errorf("screenshot %v: %d pixels of the TFLOPS series' colour #%s, want at least 40 (is the chart drawn?)", img.Bounds(), n, m[1])
	}
}

func near(a, b int) bool { return a-b <= 24 && b-a <= 24 }

// sameNumber: a cell shows want to the page's 3 significant digits.
func sameNumber(cell, want string) bool {
	if want == "" {
		return cell == ""
	}
	a, err1 := strconv.ParseFloat(cell, 64)
	b, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && math.Abs(a-b) <= 5e-3*math.Abs(b)
}

// TestDashboardEmptyMinerSaysNone: a miner with no rounds, host rounds,
// challenges or evidence yet shows "none" in every table, not an empty
// one, and says why it has no breakdown.
func TestDashboardEmptyMinerSaysNone(t *testing.T) {
	bin := chromium(t)
	f := minerFixture(t)
	var err error
	if f.st, err = openEmpty(t); err != nil {
		t.Fatal(err)
	}
	f.snap.Played, f.snap.HostPlayed, f.snap.Challenges, f.snap.Peers = nil, nil, nil, nil
	dom, _ := renderedDOM(t, bin, f)
	for _, id := range []string{"own-rounds", "host-rounds", "challenges", "score-parts", "own-weights", "detections", "peers"} {
		if r := rows(t, dom, id); len(r) != 1 || len(r[0]) != 1 || r[0][0] != "none" {
			t.Errorf("table %s: %q, want one row saying none", id, r)
		}
	}
	if chart := element(t, dom, "svg", "tflops-chart"); !strings.Contains(chart, "no data yet") {
		t.Errorf("TFLOPS chart without rounds:\n%s", chart)
	}
	if !regexp.MustCompile(`<p id="score-none" class="note">None here`).MatchString(dom) {
		t.Error("no breakdown, and the page does not say why")
	}
}
