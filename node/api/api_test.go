package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node/metrics"
)

func get(t testing.TB, h http.Handler, path string, header ...string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, body
}

func getJSON[T any](t *testing.T, h http.Handler, path string) T {
	t.Helper()
	code, body := get(t, h, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return v
}

func TestRoundsFilters(t *testing.T) {
	f := newFixture(t)
	h := New(Options{Live: f, Store: f.st})
	all := getJSON[[]Round](t, h, "/api/v1/rounds")
	if len(all) != 4 || all[0].Epoch != 4 || all[3].Epoch != 5 {
		t.Fatalf("all rounds: %+v", all)
	}
	if r := all[0]; r.Verdict != "verified" || r.Miner != f.miners[0].String() || r.CommitMS != 5 || r.SentMS == 0 || r.Samples != 3 {
		t.Fatalf("verified round: %+v", r)
	}
	if r := all[1]; r.Verdict != "failed" || r.Reason != "no commitment within 5s" || r.TFLOPS != 0 {
		t.Fatalf("failed round: %+v", r)
	}
	if e5 := getJSON[[]Round](t, h, "/api/v1/rounds?epoch=5"); len(e5) != 2 || e5[0].Epoch != 5 {
		t.Fatalf("epoch 5: %+v", e5)
	}
	// limit keeps the latest rows, oldest first.
	if last := getJSON[[]Round](t, h, "/api/v1/rounds?limit=3"); len(last) != 3 || last[0].Round != all[1].Round || last[2].Round != all[3].Round {
		t.Fatalf("limit 3: %+v", last)
	}
	if none := getJSON[[]Round](t, h, "/api/v1/rounds?since=6"); len(none) != 0 {
		t.Fatalf("since 6: %+v", none)
	}
	for _, bad := range []string{"epoch=x", "since=-1", "limit=0", "limit=5001"} {
		if code, _ := get(t, h, "/api/v1/rounds?"+bad); code != http.StatusBadRequest {
			t.Errorf("rounds?%s: %d, want 400", bad, code)
		}
	}
}

func TestWeights(t *testing.T) {
	f := newFixture(t)
	h := New(Options{Live: f, Store: f.st})
	w := getJSON[Weights](t, h, "/api/v1/weights")
	if w.Epoch != 5 || len(w.Miners) != 2 || w.Hash == "" {
		t.Fatalf("latest weights: %+v", w)
	}
	for _, m := range w.Miners {
		if m.Validators[f.validator.String()] == 0 || m.Consensus <= 0 {
			t.Fatalf("miner weight: %+v", m)
		}
	}
	if w4 := getJSON[Weights](t, h, "/api/v1/weights?epoch=4"); w4.Epoch != 4 {
		t.Fatalf("epoch 4: %+v", w4)
	}
	if code, body := get(t, h, "/api/v1/weights?epoch=9"); code != http.StatusNotFound || !strings.Contains(string(body), "no epoch records") {
		t.Fatalf("epoch 9: %d %s", code, body)
	}
	hist := getJSON[[]EpochConsensus](t, h, "/api/v1/weights/history")
	if len(hist) != 2 || hist[1].Epoch != 5 || hist[1].Miners[f.miners[0].String()] <= hist[1].Miners[f.miners[1].String()] {
		t.Fatalf("history: %+v", hist)
	}
	if one := getJSON[[]EpochConsensus](t, h, "/api/v1/weights/history?last=1"); len(one) != 1 || one[0].Epoch != 5 {
		t.Fatalf("history last=1: %+v", one)
	}
}

func TestEmptyStore(t *testing.T) {
	f := newFixture(t)
	empty := *f
	var err error
	if empty.st, err = openEmpty(t); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Live: f, Store: empty.st})
	if code, _ := get(t, h, "/api/v1/weights"); code != http.StatusNotFound {
		t.Errorf("weights on an empty store: %d, want 404", code)
	}
	if code, body := get(t, h, "/api/v1/pricing"); code != http.StatusNotFound || !strings.Contains(string(body), "error") {
		t.Errorf("pricing on an empty store: %d %s", code, body)
	}
	if hist := getJSON[[]EpochConsensus](t, h, "/api/v1/weights/history"); len(hist) != 0 {
		t.Errorf("history on an empty store: %+v", hist)
	}
	if rounds := getJSON[[]Round](t, h, "/api/v1/rounds"); rounds == nil || len(rounds) != 0 {
		t.Errorf("rounds on an empty store: %#v", rounds)
	}
}

func TestToken(t *testing.T) {
	f := newFixture(t)
	h := New(Options{Live: f, Store: f.st, Token: "0123456789abcdef0123", Metrics: metrics.New()})
	for _, path := range []string{"/api/v1/status", "/metrics", "/api/v1/openapi.yaml"} {
		if code, _ := get(t, h, path); code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d, want 401", path, code)
		}
		if code, _ := get(t, h, path, "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
		if code, _ := get(t, h, path, "Authorization", "Bearer 0123456789abcdef0123"); code != http.StatusOK {
			t.Errorf("%s with the token: %d, want 200", path, code)
		}
	}
	// The page itself holds no data.
	if code, body := get(t, h, "/"); code != http.StatusOK || !strings.Contains(string(body), "<table id=\"rounds\">") {
		t.Errorf("dashboard without a token: %d", code)
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:9090", false, true},
		{"[::1]:9090", false, true},
		{"localhost:9090", false, true},
		{"127.0.0.1:0", false, true},
		{"0.0.0.0:9090", false, false},
		{":9090", false, false},
		{"192.168.1.5:9090", false, false},
		{"example.com:9090", false, false},
		{"0.0.0.0:9090", true, true},
		{"127.0.0.1", false, false},
	} {
		if err := CheckAddr(c.addr, c.token); (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, token %v) = %v, want ok %v", c.addr, c.token, err, c.ok)
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		content string
		ok      bool
	}{
		"good":  {"  0123456789abcdef\n", true},
		"short": {"0123456789", false},
		"space": {"0123456789 abcdef0123", false},
		"empty": {"", false},
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(c.content), 0o600)
		tok, err := ReadToken(path)
		if (err == nil) != c.ok || (c.ok && tok != strings.TrimSpace(c.content)) {
			t.Errorf("%s: %q, %v", name, tok, err)
		}
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing token file was accepted")
	}
}

func TestMetricsEndpoint(t *testing.T) {
	f := newFixture(t)
	m := metrics.New()
	m.AddGauges(metrics.Gauges{Peers: func() float64 { return 3 }})
	m.Round(false, "no commitment within 5s", 0, 0, 0)
	m.Round(true, "", 5*time.Millisecond, time.Millisecond, 2e-4)
	m.Gossip("pog/challenge/1", "reject")
	h := New(Options{Live: f, Store: f.st, Metrics: m})
	code, body := get(t, h, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`pog_rounds_total{reason="deadline",verdict="failed"} 1`,
		`pog_rounds_total{reason="",verdict="verified"} 1`,
		`pog_gossip_messages_total{result="reject",topic="pog/challenge/1"} 1`,
		`pog_round_tflops_count 1`,
		`pog_peers 3`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, New(Options{Live: f, Store: f.st}), "/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics without metrics: %d, want 404", code)
	}
}
