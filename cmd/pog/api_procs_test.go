package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pog-network/pog/node/api"
)

// checkRunningAPI runs while TestThreeProcesses's nodes (started with
// --api 127.0.0.1:0) are up: every endpoint answers on every node, the
// offline commands and pog status go through the API, /metrics passes
// promtool when it is installed, and with POG_BROWSER_ARTIFACTS set the
// dashboard renders rounds in headless Chromium (screenshot saved there).
// Scores are asked for epoch weighed, whose record weighs both miners: in
// 2 s epochs the latest one with evidence may hold one miner's rounds
// alone.
func checkRunningAPI(t *testing.T, bin string, homes map[string]string, weighed uint64) {
	t.Helper()
	for name, home := range homes {
		c, err := runningAPI(home)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, path := range api.Paths() {
			path = strings.ReplaceAll(path, "{id}", pogOut(t, bin, "id", "--home", homes["miner1"]))
			if strings.Contains(path, "score") {
				path += fmt.Sprintf("?epoch=%d", weighed)
			}
			code, body := httpGet(t, c.base+path)
			// Pricing and scores need round evidence, which only a
			// validator keeps.
			evidence := path == "/api/v1/pricing" || strings.Contains(path, "score")
			if code != http.StatusOK && !(code == http.StatusNotFound && evidence && name != "validator") {
				t.Errorf("%s GET %s: %d %s", name, path, code, body)
			}
		}
		var st api.Status
		if err := c.get("/api/v1/status", &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Peers) == 0 || st.UptimeS <= 0 || st.PeerID != pogOut(t, bin, "id", "--home", home) {
			t.Errorf("%s status: %+v", name, st)
		}
		// The latest epoch's own weight may be 0 (in 2 s epochs on a
		// loaded machine a miner can go an epoch without a round); the
		// history holds the epoch waitWeighed saw weigh it.
		if name != "validator" && (st.Own == nil || len(st.Validators) != 1 || len(st.Challenges) == 0 || !weighedInHistory(t, c, st.PeerID)) {
			t.Errorf("%s (a weighed miner) status: own weight %+v, validators %+v, challenges %+v", name, st.Own, st.Validators, st.Challenges)
		}
	}
	out := pogOut(t, bin, "status", "--home", homes["validator"])
	if !strings.Contains(out, "validator 12D3") || !strings.Contains(out, "last rounds:") || !strings.Contains(out, "verified") {
		t.Errorf("pog status on the validator:\n%s", out)
	}
	// The weight shown is the latest epoch's, which may be 0 (above).
	out = pogOut(t, bin, "status", "--home", homes["miner1"])
	if !regexp.MustCompile(`weight +\d+\.\d+ +incentive +\d+\.\d+ +\(epoch \d+`).MatchString(out) || !strings.Contains(out, ", connected") || !strings.Contains(out, "last challenges received:") {
		t.Errorf("pog status on a miner shows no weight line or no connected validator:\n%s", out)
	}
	t.Logf("pog status on a miner:\n%s", out)
	checkStatusWatch(t, bin, homes["validator"])
	// The offline commands answer while the node runs (the store is locked).
	var rows []roundRow
	if err := json.Unmarshal([]byte(pogOut(t, bin, "rounds", "--home", homes["validator"], "--json")), &rows); err != nil || len(rows) == 0 {
		t.Errorf("pog rounds while running: %d rows, %v", len(rows), err)
	}
	for _, args := range [][]string{{"epochs"}, {"weights"}, {"pricing"}} {
		out := pogOut(t, bin, append(args, "--home", homes["validator"])...)
		if len(strings.Split(out, "\n")) < 2 {
			t.Errorf("pog %s while running: %q", args[0], out)
		}
	}
	c, _ := runningAPI(homes["validator"])
	code, metrics := httpGet(t, c.base+"/metrics")
	if code != http.StatusOK || !strings.Contains(string(metrics), `pog_rounds_total{reason="",verdict="verified"}`) {
		t.Errorf("/metrics: %d, no verified rounds counted", code)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(string(metrics))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else {
		t.Log("notice: no promtool; /metrics not linted")
	}
	if dir := os.Getenv("POG_BROWSER_ARTIFACTS"); dir != "" {
		checkDashboard(t, c.base, dir)
	}
}

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// checkDashboard loads the dashboard in headless Chromium, lets its
// script fetch and render, and requires round rows in the table.
func checkDashboard(t *testing.T, base, dir string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Log("notice: no Chromium; dashboard not checked in a browser")
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--virtual-time-budget=15000", "--window-size=1400,1000"}
	dom, err := exec.Command(bin, append(args, "--dump-dom", base+"/")...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "dashboard.html"), dom, 0o644)
	table := regexp.MustCompile(`(?s)<table id="rounds">.*?<tbody>(.*?)</tbody>`).FindSubmatch(dom)
	if table == nil || !strings.Contains(string(table[1]), "<tr") || !strings.Contains(string(table[1]), "verified") {
		t.Fatalf("the dashboard's rounds table has no verified rows after its script ran (DOM in %s)", dir)
	}
	if !strings.Contains(string(dom), `data-loaded="1"`) || !strings.Contains(string(dom), "<path") {
		t.Fatalf("the dashboard did not finish loading or drew no chart (DOM in %s)", dir)
	}
	shot := filepath.Join(dir, "dashboard.png")
	cmd := exec.Command(bin, append(args, "--screenshot="+shot, base+"/")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Log(fmt.Sprintf("dashboard screenshot: %s", shot))
}

// waitWeighed waits until every miner has logged a positive epoch weight.
func waitWeighed(t *testing.T, miners []*proc, deadline <-chan time.Time) {
	t.Helper()
	for _, m := range miners {
		for weighed := false; !weighed; {
			select {
			case ev := <-m.events:
				w, _ := ev["weight"].(float64)
				weighed = ev["msg"] == "epoch weight" && w > 0
			case <-deadline:
				t.Fatalf("%v logged no positive epoch weight", m.cmd.Args)
			}
		}
	}
}

// weighedInHistory says whether the node's weights history gives miner a
// positive consensus weight in some epoch.
func weighedInHistory(t *testing.T, c *apiClient, miner string) bool {
	t.Helper()
	var h []api.EpochConsensus
	if err := c.get("/api/v1/weights/history", &h); err != nil {
		t.Fatal(err)
	}
	for _, e := range h {
		if e.Miners[miner] > 0 {
			return true
		}
	}
	return false
}

// checkAPIStopped: a stopped node removes its API address file.
func checkAPIStopped(t *testing.T, homes map[string]string) {
	t.Helper()
	for name, home := range homes {
		if _, err := os.Stat(filepath.Join(home, APIAddrFile)); !os.IsNotExist(err) {
			t.Errorf("%s: %s left behind after a clean stop (%v)", name, APIAddrFile, err)
		}
	}
}

// checkStatusWatch: pog status --watch redraws until SIGINT, then exits 0.
func checkStatusWatch(t *testing.T, bin, home string) {
	t.Helper()
	cmd := exec.Command(bin, "status", "--home", home, "--watch", "--interval", "100ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 64<<10)
	var seen []byte
	for strings.Count(string(seen), "\033[2J") < 3 {
		n, err := out.Read(buf)
		if err != nil {
			t.Fatalf("pog status --watch stopped before redrawing 3 times: %v\n%s", err, seen)
		}
		seen = append(seen, buf[:n]...)
	}
	cmd.Process.Signal(syscall.SIGINT)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pog status --watch after SIGINT: %v", err)
	}
	if !strings.Contains(string(seen), "last rounds:") {
		t.Fatalf("pog status --watch printed:\n%s", seen)
	}
	frames := strings.Split(string(seen), "\033[H\033[2J")
	t.Logf("pog status --watch on the validator:\n%s", frames[len(frames)-2])
}
