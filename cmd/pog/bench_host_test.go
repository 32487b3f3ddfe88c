package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestBenchHostVerifiesAllThreeProofs(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := runBench([]string{"--host", "--json", "--quiet", "--seed", "t", "--plot-dir", dir,
		"--cpu-steps", "1024", "--cpu-segment", "64", "--ram-mib", "1", "--ram-steps", "256", "--ram-segment", "16",
		"--plot-mib", "1", "--plot-walks", "2", "--plot-steps", "32", "--plot-segment", "4"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r hostBenchResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]hostProof{"cpu": r.CPU.hostProof, "ram": r.RAM.hostProof, "storage": r.Storage.hostProof} {
		if !p.Verified || p.Samples == 0 || p.StepNs <= 0 || p.Credit <= 0 || p.Credit > 1 || p.VerifySeconds <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if r.RAM.DatasetBytes != 1<<20 || r.RAM.CreditedBytes > float64(r.RAM.DatasetBytes) || r.RAM.RecomputedStepNs <= 0 || r.RAM.OnDiskStepNs <= 0 {
		t.Errorf("ram: %+v", r.RAM)
	}
	if r.Storage.PlotBytes != 1<<20 || r.Storage.BuildBps <= 0 || r.Storage.RegeneratedStepNs <= 0 {
		t.Errorf("storage: %+v", r.Storage)
	}
	if !(r.Parts.CPU > 0 && r.Parts.CPU < 1 && r.Parts.RAM > 0 && r.Parts.Storage > 0) {
		t.Errorf("score parts of a small host: %+v", r.Parts)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the plot was not removed: %v", left)
	}
}

func TestBenchHostRefusesBadShapes(t *testing.T) {
	for _, args := range [][]string{
		{"--host", "--cpu-steps", "0"},
		{"--host", "--cpu-segment", "3"},
		{"--host", "--samples", "1000"},
		{"--host", "--plot-segment", "5000"},
		{"--host", "--cpu-steps", "1024", "--cpu-segment", "64", "--ram-mib", "1048576"},
	} {
		var out, errb bytes.Buffer
		if code := runBench(append(args, "--quiet"), &out, &errb); code == 0 || !strings.Contains(errb.String(), "pog bench --host") {
			t.Errorf("%v: exit %d, %q", args, code, errb.String())
		}
	}
}
