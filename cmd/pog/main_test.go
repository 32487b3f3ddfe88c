package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lukechampine.com/blake3"
)

func runPog(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBenchJSON(t *testing.T) {
	for _, prec := range []string{"fp16", "fp32"} {
		code, out, errs := runPog("bench", "--size", "256", "--tile", "1024", "--precision", prec, "--json", "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", prec, code, errs)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("bad JSON %q: %v", out, err)
		}
		for _, key := range []string{"backend", "precision", "size", "tile", "gemm_seconds", "tflops", "hash_gbps", "root",
			"samples", "detect_probability", "verified", "verify_seconds", "verify_cost_ratio"} {
			if _, ok := r[key]; !ok {
				t.Errorf("JSON lacks %q", key)
			}
		}
		if r["verified"] != true || r["precision"] != prec || r["samples"].(float64) != 66 || r["tile"].(float64) != 1024 ||
			r["detect_probability"].(float64) < 0.999 {
			t.Errorf("unexpected result %v", r)
		}
	}
}

// --output writes the serialised output; its BLAKE3 hash (what b3sum prints)
// is the reported root, and --seed makes the root reproducible.
func TestBenchOutputIsRoot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.bin")
	code, out, errs := runPog("bench", "--size", "128", "--tile", "1024", "--seed", "s1", "--output", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct{ Root string }
	json.Unmarshal([]byte(out), &r)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", blake3.Sum256(data)); got != r.Root {
		t.Fatalf("blake3(output) %s, root %s", got, r.Root)
	}
	if b3, err := exec.LookPath("b3sum"); err == nil {
		out, err := exec.Command(b3, "--no-names", path).Output()
		if err != nil || strings.TrimSpace(string(out)) != r.Root {
			t.Fatalf("b3sum says %q (%v), root %s", out, err, r.Root)
		}
	}
	_, again, _ := runPog("bench", "--size", "128", "--tile", "1024", "--seed", "s1", "--json", "--workers", "1")
	var r2 struct{ Root string }
	json.Unmarshal([]byte(again), &r2)
	if r2.Root != r.Root {
		t.Fatalf("same seed, different roots: %s, %s", r.Root, r2.Root)
	}
	if !strings.Contains(errs, "verify") {
		t.Errorf("no progress on stderr: %q", errs)
	}
}

func TestBenchFailures(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "--adversary", "lazy", "--size", "256", "--tile", "4096"}, 1, "tile not computed"},
		{[]string{"bench", "--adversary", "tamper", "--size", "256", "--tile", "4096"}, 1, "not in the committed root"},
		{[]string{"bench", "--tile", "3000"}, 2, "tile 3000 bytes"},
		{[]string{"bench", "--precision", "fp8"}, 2, "unknown precision"},
		{[]string{"bench", "--size", "100"}, 2, "multiple of the tile edge"},
		{[]string{"bench", "--precision", "fp32", "--size", "256", "--k", "5000"}, 2, "exactness allows"},
		{[]string{"bench", "--backend", "tpu"}, 2, "unknown backend"},
		{[]string{"bench", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"bench", "extra"}, 2, "unexpected argument"},
		{[]string{"bench", "--size", "256", "--output", "/nonexistent/dir/x"}, 1, "no such file"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{nil, 2, "usage"},
	}
	for _, tt := range tests {
		code, out, errs := runPog(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("pog %v: exit %d, output %q; want exit %d mentioning %q", tt.args, code, out+errs, tt.code, tt.want)
		}
	}
}
