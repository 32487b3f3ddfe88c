package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/kernels/hw"
)

// smallHW makes `pog hw` measure with tiny buffers and, unless realGPUs,
// a fake two-GPU inventory; it restores the defaults after the test.
func smallHW(t *testing.T, realGPUs bool) {
	saved := hwOptions
	t.Cleanup(func() { hwOptions = saved })
	hwOptions = hw.Options{RAMBytes: 1 << 20, RAMDuration: time.Millisecond, StorageBytes: 256 << 10,
		StorageDuration: time.Second}
	if !realGPUs {
		hwOptions.Inventory = func() hw.GPUInventory {
			g := hw.GPU{Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-0", MemoryBytes: 80 << 30, ComputeMajor: 9,
				PCIeGen: 4, PCIeGenMax: 5, PCIeWidth: 16, PCIeWidthMax: 16, SMClockMHz: 345, SMClockMaxMHz: 1980,
				MemClockMHz: 2619, MemClockMaxMHz: 2619, PowerLimitMW: 700000}
			g2 := g
			g2.Index, g2.UUID = 1, "GPU-1"
			return hw.GPUInventory{GPUs: []hw.GPU{g, g2}, Driver: "550.54.15", CUDA: "12.4"}
		}
	}
}

func hwJSON(t *testing.T, args ...string) *hw.Report {
	t.Helper()
	code, out, errs := runPog(append([]string{"hw", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("pog hw %v: exit %d: %s", args, code, errs)
	}
	var r hw.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return &r
}

func TestHWCommand(t *testing.T) {
	smallHW(t, false)
	home := t.TempDir()
	cache := filepath.Join(home, hwCacheFile)

	code, out, errs := runPog("hw", "--home", home)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"GPU  NAME", "NVIDIA H100 80GB HBM3  80.0 GiB  9.0  Gen4 x16 (max Gen5 x16)  345/1980",
		"700 W", "driver     550.54.15, CUDA 12.4", "self-measured, not scored", "\ncpu        ", "\nram        ", "copy ", "\nstorage    " + home,
		"write ", "saved to " + cache, "GPU bandwidth (host↔device, device memory): not measured (CPU build)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "pog hw: measuring storage throughput…") {
		t.Errorf("no progress on stderr: %q", errs)
	}
	first, err := hw.Load(cache)
	if err != nil {
		t.Fatal(err)
	}

	// Within --max-age the cache answers, silently.
	code, out, errs = runPog("hw", "--home", home)
	if code != 0 || !strings.Contains(out, "(cached in "+cache) || errs != "" {
		t.Errorf("second run: exit %d, %q, %q", code, out, errs)
	}
	r := hwJSON(t, "--home", home)
	if !r.Measured.Equal(first.Measured) || len(r.GPUs) != 2 || r.Storage.Path != home {
		t.Errorf("cached JSON %+v, want the saved report of %v", r, first.Measured)
	}

	// An old report: --max-age decides, and --refresh always measures.
	old := *first
	old.Measured = time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
	if err := old.Save(cache); err != nil {
		t.Fatal(err)
	}
	if r := hwJSON(t, "--home", home, "--quiet"); !r.Measured.Equal(old.Measured) {
		t.Errorf("2 h old report not used under the 24 h default: %v", r.Measured)
	}
	if r := hwJSON(t, "--home", home, "--refresh"); !r.Measured.After(old.Measured.Add(time.Hour)) {
		t.Errorf("--refresh reused %v", r.Measured)
	}
	old.Save(cache)
	if r := hwJSON(t, "--home", home, "--max-age", "1h"); !r.Measured.After(old.Measured.Add(time.Hour)) {
		t.Errorf("--max-age 1h reused a 2 h old report")
	}

	// A corrupt cache is replaced, and says so.
	os.WriteFile(cache, []byte("{not json"), 0o600)
	if r := hwJSON(t, "--home", home); !strings.Contains(strings.Join(r.Notes, "\n"), "cached report ignored") {
		t.Errorf("notes %q", r.Notes)
	}
	if _, err := hw.Load(cache); err != nil {
		t.Errorf("cache not replaced: %v", err)
	}
	if names, _ := os.ReadDir(home); len(names) != 1 {
		t.Errorf("home holds %v, want only %s", names, hwCacheFile)
	}
}

func TestHWCommandJSONShape(t *testing.T) {
	smallHW(t, true) // this machine's NVML: none here, so no GPUs and a note
	code, out, errs := runPog("hw", "--json", "--quiet", "--home", t.TempDir())
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	for _, key := range []string{"measured", "gpus", "driver", "cuda", "notes", "cpu", "ram", "storage"} {
		if _, ok := m[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	if _, ok := m["gpus"].([]any); !ok {
		t.Errorf("gpus is %v, want a list", m["gpus"])
	}
	var r hw.Report
	json.Unmarshal([]byte(out), &r)
	if len(r.GPUs) == 0 && !strings.Contains(strings.Join(r.Notes, "\n"), "reporting 0 GPUs") {
		t.Errorf("no GPUs and no note saying why: %q", r.Notes)
	}
	if r.CPU.Threads < 1 || r.RAM.CopyGBps <= 0 || r.Storage.WriteMBps <= 0 || r.Storage.ReadMBps <= 0 {
		t.Errorf("report %+v", r)
	}
}

func TestHWCommandNoHome(t *testing.T) {
	smallHW(t, false)
	hwOptions.SkipStorage = true // measuring would write a file in the package directory
	code, out, errs := runPog("hw", "--quiet")
	if code != 0 || !strings.Contains(out, "storage: not measured (skipped)") || strings.Contains(out, "saved to") {
		t.Fatalf("exit %d: %q %q", code, out, errs)
	}
	if _, err := os.Stat(hwCacheFile); err == nil {
		t.Errorf("wrote %s without --home", hwCacheFile)
	}
}

func TestHWCommandErrors(t *testing.T) {
	smallHW(t, false)
	home := t.TempDir()
	file := filepath.Join(home, "file")
	os.WriteFile(file, nil, 0o600)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"hw", "--max-age", "-1h"}, 2, "negative"},
		{[]string{"hw", "--max-age", "soon"}, 2, "invalid value"},
		{[]string{"hw", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"hw", "extra"}, 2, "unexpected argument"},
		{[]string{"hw", "-h"}, 0, "-refresh"},
		{[]string{"hw", "--home", filepath.Join(home, "absent")}, 1, "no such file"},
		{[]string{"hw", "--home", file}, 1, "not a directory"},
	}
	for _, tt := range tests {
		code, out, errs := runPog(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("pog %v: exit %d, %q; want exit %d mentioning %q", tt.args, code, out+errs, tt.code, tt.want)
		}
	}
}
