package hw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// isLinux gates checks of what only Linux reports (capacities, fadvise).
const isLinux = runtime.GOOS == "linux"

// tinyOptions measures a temporary directory with small buffers, and a
// fake two-GPU inventory, so a whole Measure takes milliseconds.
func tinyOptions(t *testing.T) Options {
	return Options{
		Dir:             t.TempDir(),
		RAMBytes:        1 << 20,
		RAMDuration:     time.Millisecond,
		StorageBytes:    256 << 10,
		StorageDuration: 2 * time.Second,
		Inventory:       fakeInventory,
	}
}

func fakeInventory() GPUInventory {
	return GPUInventory{
		GPUs: []GPU{
			{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-a", MemoryBytes: 80 << 30, ComputeMajor: 9},
			{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-b", MemoryBytes: 80 << 30, ComputeMajor: 9},
		},
		Driver: "550.54.15", CUDA: "12.4", Notes: []string{"from the fake"},
	}
}

func hasNote(r *Report, sub string) bool {
	return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, sub) })
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestMeasure(t *testing.T) {
	opts := tinyOptions(t)
	var stages []Stage
	opts.Progress = func(s Stage) { stages = append(stages, s) }
	r, err := Measure(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Stage{StageGPUs, StageCPU, StageRAM, StageStorage}; !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
	if len(r.GPUs) != 2 || r.Driver != "550.54.15" || r.CUDA != "12.4" || !hasNote(r, "from the fake") {
		t.Errorf("inventory not carried over: %+v", r)
	}
	if !hasNote(r, "not measured (CPU build)") {
		t.Errorf("notes %q lack the CPU-build bandwidth note", r.Notes)
	}
	if time.Since(r.Measured) > time.Minute || r.Measured.Location() != time.UTC {
		t.Errorf("measured %v", r.Measured)
	}
	if r.CPU.Threads < 1 || r.RAM.CopyGBps <= 0 || r.RAM.BufferBytes != 1<<20 {
		t.Errorf("cpu %+v ram %+v", r.CPU, r.RAM)
	}
	st := r.Storage
	if st.Path != opts.Dir || st.WriteMBps <= 0 || st.ReadMBps <= 0 || st.TestBytes != 256<<10 {
		t.Errorf("storage %+v, notes %q", st, r.Notes)
	}
	if isLinux && (st.TotalBytes == 0 || st.FreeBytes == 0 || st.FreeBytes > st.TotalBytes || r.RAM.TotalBytes == 0) {
		t.Errorf("capacities: storage %+v ram %+v", st, r.RAM)
	}
	if names := dirEntries(t, opts.Dir); len(names) != 0 {
		t.Errorf("left behind %v", names)
	}
}

func TestMeasureNoGPUs(t *testing.T) {
	opts := tinyOptions(t)
	opts.SkipStorage = true
	opts.Dir = filepath.Join(opts.Dir, "absent") // not looked at
	opts.Inventory = func() GPUInventory {
		return GPUInventory{Notes: []string{"NVML not available: test; reporting 0 GPUs"}}
	}
	r, err := Measure(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.GPUs == nil || len(r.GPUs) != 0 || r.Notes[0] != "NVML not available: test; reporting 0 GPUs" {
		t.Errorf("gpus %v notes %q", r.GPUs, r.Notes)
	}
	if hasNote(r, "bandwidth") {
		t.Errorf("bandwidth note without GPUs: %q", r.Notes)
	}
	if !hasNote(r, "storage: not measured (skipped)") || r.Storage != (Storage{}) {
		t.Errorf("storage %+v notes %q", r.Storage, r.Notes)
	}
}

func TestMeasureErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		dir  string
		want string
	}{
		{"missing dir", context.Background(), filepath.Join(t.TempDir(), "absent"), "no such file"},
		{"file, not dir", context.Background(), file, "not a directory"},
		{"canceled", canceled, t.TempDir(), "context canceled"},
	}
	for _, tt := range tests {
		opts := tinyOptions(t)
		opts.Dir = tt.dir
		r, err := Measure(tt.ctx, opts)
		if err == nil || r != nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, %v; want an error mentioning %q", tt.name, r, err, tt.want)
		}
	}
}

// fakeBandwidth measures GPU 1 only.
type fakeBandwidth struct{ calls []string }

func (f *fakeBandwidth) Measure(ctx context.Context, g GPU) (float64, float64, float64, error) {
	f.calls = append(f.calls, g.UUID)
	if _, ok := ctx.Deadline(); !ok {
		return 0, 0, 0, errors.New("no deadline")
	}
	if g.Index == 0 {
		return 0, 0, 0, errors.New("cudaErrorNoDevice")
	}
	return 55.1, 53.2, 2900, nil
}

func TestGPUBandwidth(t *testing.T) {
	check := func(t *testing.T, r *Report, f *fakeBandwidth) {
		t.Helper()
		if !slices.Equal(f.calls, []string{"GPU-a", "GPU-b"}) {
			t.Errorf("calls %v", f.calls)
		}
		if g := r.GPUs[1]; g.H2DGBps != 55.1 || g.D2HGBps != 53.2 || g.DeviceGBps != 2900 {
			t.Errorf("GPU 1 %+v", g)
		}
		if g := r.GPUs[0]; g.H2DGBps != 0 || !hasNote(r, "GPU 0 bandwidth: not measured: cudaErrorNoDevice") {
			t.Errorf("GPU 0 %+v notes %q", g, r.Notes)
		}
		if hasNote(r, "CPU build") {
			t.Errorf("CPU-build note with a GPU backend: %q", r.Notes)
		}
	}
	t.Run("option", func(t *testing.T) {
		f := &fakeBandwidth{}
		opts := tinyOptions(t)
		opts.SkipStorage, opts.GPUBandwidth = true, f
		var stages []Stage
		opts.Progress = func(s Stage) { stages = append(stages, s) }
		r, err := Measure(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, f)
		if !slices.Contains(stages, StageGPUBandwidth) {
			t.Errorf("stages %v", stages)
		}
	})
	t.Run("registered", func(t *testing.T) {
		f := &fakeBandwidth{}
		RegisterGPUBandwidth(f)
		defer RegisterGPUBandwidth(nil)
		opts := tinyOptions(t)
		opts.SkipStorage = true
		r, err := Measure(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, f)
	})
	t.Run("implausible", func(t *testing.T) {
		g := GPU{}
		if err := measureGPUBandwidth(context.Background(), badBandwidth{}, &g); err == nil || g.H2DGBps != 0 {
			t.Errorf("accepted NaN: %v %+v", err, g)
		}
	})
}

type badBandwidth struct{}

func (badBandwidth) Measure(context.Context, GPU) (float64, float64, float64, error) {
	nan := 0.0
	return nan / nan, 1, 1, nil
}

func TestMeasureRAM(t *testing.T) {
	tests := []struct {
		name     string
		total    uint64
		size     int64
		wantSize int64
	}{
		{"1 MiB", 0, 1 << 20, 1 << 20},
		{"capped at a sixteenth of RAM per buffer", 32 << 20, 64 << 20, 2 << 20},
		{"unaligned small", 0, 1000, 1000},
		{"page-rounded", 0, 3<<20 + 5, 3 << 20},
	}
	for _, tt := range tests {
		r := RAM{TotalBytes: tt.total}
		if err := measureRAM(context.Background(), &r, tt.size, time.Millisecond); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.CopyGBps <= 0 || r.BufferBytes != tt.wantSize {
			t.Errorf("%s: %+v, want buffer %d", tt.name, r, tt.wantSize)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := measureRAM(ctx, &RAM{}, 1<<20, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestMeasureStorage(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		size      int64
		d         time.Duration
		wantBytes int64
		wantErr   error
		wantNote  string
	}{
		{name: "256 KiB", ctx: context.Background(), size: 256 << 10, d: 5 * time.Second, wantBytes: 256 << 10},
		{name: "3 chunks and a bit", ctx: context.Background(), size: 3<<20 + 100, d: 5 * time.Second, wantBytes: 3<<20 + 100},
		// Each phase stops after its first chunk once d has passed.
		{name: "time-bounded", ctx: context.Background(), size: 4 << 20, d: time.Nanosecond, wantBytes: 1 << 20,
			wantNote: "storage write stopped after 1ns at 1048576 of 4194304 bytes"},
		{name: "canceled", ctx: canceled, size: 1 << 20, d: time.Second, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var s Storage
			notes, err := measureStorage(tt.ctx, &s, dir, tt.size, tt.d)
			if names := dirEntries(t, dir); len(names) != 0 {
				t.Errorf("temporary file left behind: %v", names)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Path != dir || s.WriteMBps <= 0 || s.ReadMBps <= 0 || s.TestBytes != tt.wantBytes {
				t.Errorf("%+v, want %d bytes", s, tt.wantBytes)
			}
			if isLinux && !s.CacheDropped && !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "page cache") }) {
				t.Errorf("cache neither dropped nor noted: %q", notes)
			}
			if tt.wantNote != "" && !slices.Contains(notes, tt.wantNote) {
				t.Errorf("notes %q lack %q", notes, tt.wantNote)
			}
		})
	}
}

func TestReportJSON(t *testing.T) {
	r := &Report{Measured: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), GPUs: []GPU{{Name: "x"}}, Notes: []string{}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	keys := func(v any) []string {
		var ks []string
		for k := range v.(map[string]any) {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	want := map[string][]string{
		"": {"cpu", "cuda", "driver", "gpus", "measured", "notes", "ram", "storage"},
		"gpu": {"compute_major", "compute_minor", "d2h_gbps", "device_gbps", "h2d_gbps", "index", "mem_clock_max_mhz",
			"mem_clock_mhz", "memory_bytes", "name", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max",
			"power_limit_mw", "sm_clock_max_mhz", "sm_clock_mhz", "uuid"},
		"cpu":     {"arch", "cores", "cur_mhz", "logical_cpus", "max_mhz", "model", "sockets", "threads"},
		"ram":     {"buffer_bytes", "copy_gbps", "total_bytes"},
		"storage": {"cache_dropped", "free_bytes", "path", "read_mbps", "test_bytes", "total_bytes", "write_mbps"},
	}
	got := map[string][]string{"": keys(m), "gpu": keys(m["gpus"].([]any)[0]), "cpu": keys(m["cpu"]),
		"ram": keys(m["ram"]), "storage": keys(m["storage"])}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON keys\n got %v\nwant %v", got, want)
	}
	if m["measured"] != "2026-01-02T03:04:05Z" {
		t.Errorf("measured %v", m["measured"])
	}
	empty, _ := json.Marshal(&Report{GPUs: []GPU{}, Notes: []string{}})
	if !bytes.Contains(empty, []byte(`"gpus":[]`)) || !bytes.Contains(empty, []byte(`"notes":[]`)) {
		t.Errorf("empty lists not [] in %s", empty)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hw.json")
	r, err := Measure(context.Background(), tinyOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) || !got.Measured.Equal(r.Measured) {
		t.Errorf("round trip\n got %s\nwant %s", b, a)
	}
	if names := dirEntries(t, dir); !slices.Equal(names, []string{"hw.json"}) {
		t.Errorf("save left %v", names)
	}
	if err := r.Save(filepath.Join(dir, "absent", "hw.json")); err == nil {
		t.Error("saved into a missing directory")
	}

	bad := []struct {
		name, content, want string
	}{
		{"corrupt", `{"measured": "2026-01-02T03:04:05Z", "gpus": [`, "not a valid hardware report"},
		{"not json", "hello", "not a valid hardware report"},
		{"no time", `{"gpus": []}`, "no measurement time"},
		{"wrong types", `{"measured": "2026-01-02T03:04:05Z", "gpus": 3}`, "not a valid hardware report"},
		{"huge", `{"notes": ["` + strings.Repeat("x", MaxCacheBytes) + `"]}`, "larger than"},
	}
	for _, tt := range bad {
		p := filepath.Join(dir, tt.name+".json")
		os.WriteFile(p, []byte(tt.content), 0o600)
		if r, err := Load(p); err == nil || r != nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, %v; want an error mentioning %q", tt.name, r, err, tt.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "null-lists.json")
	os.WriteFile(p, []byte(`{"measured": "2026-01-02T03:04:05Z", "gpus": null}`), 0o600)
	if r, err := Load(p); err != nil || r.GPUs == nil || r.Notes == nil {
		t.Errorf("null lists: %+v, %v", r, err)
	}
}

func TestCached(t *testing.T) {
	opts := tinyOptions(t)
	writeAged := func(t *testing.T, path string, age time.Duration, dir string) *Report {
		t.Helper()
		r := &Report{Measured: time.Now().UTC().Add(-age).Truncate(time.Second), GPUs: []GPU{}, Notes: []string{"old"},
			Storage: Storage{Path: dir}}
		if err := r.Save(path); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name       string
		setup      func(t *testing.T, path string)
		maxAge     time.Duration
		wantCached bool
		wantNote   string
	}{
		{name: "no cache", setup: func(*testing.T, string) {}, maxAge: time.Hour},
		{name: "fresh", setup: func(t *testing.T, p string) { writeAged(t, p, time.Hour, opts.Dir) },
			maxAge: 24 * time.Hour, wantCached: true},
		{name: "stale", setup: func(t *testing.T, p string) { writeAged(t, p, 25*time.Hour, opts.Dir) },
			maxAge: 24 * time.Hour},
		{name: "max age 0 always measures", setup: func(t *testing.T, p string) { writeAged(t, p, 0, opts.Dir) }},
		{name: "from the future", setup: func(t *testing.T, p string) { writeAged(t, p, -time.Hour, opts.Dir) },
			maxAge: 24 * time.Hour},
		{name: "other storage dir", setup: func(t *testing.T, p string) { writeAged(t, p, time.Hour, "/elsewhere") },
			maxAge: 24 * time.Hour},
		{name: "corrupt", setup: func(t *testing.T, p string) { os.WriteFile(p, []byte("{garbage"), 0o600) },
			maxAge: 24 * time.Hour, wantNote: "cached report ignored and replaced: hw: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hw.json")
			tt.setup(t, path)
			start := time.Now().Add(-time.Second)
			r, cached, err := Cached(context.Background(), path, tt.maxAge, opts)
			if err != nil {
				t.Fatal(err)
			}
			if cached != tt.wantCached {
				t.Fatalf("cached = %v, want %v", cached, tt.wantCached)
			}
			if cached {
				if !slices.Equal(r.Notes, []string{"old"}) {
					t.Errorf("cached report %+v", r)
				}
				return
			}
			if r.Measured.Before(start) || len(r.GPUs) != 2 || hasNote(r, "old") {
				t.Errorf("not measured anew: %+v", r)
			}
			if tt.wantNote != "" && !hasNote(r, tt.wantNote) {
				t.Errorf("notes %q lack %q", r.Notes, tt.wantNote)
			}
			saved, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !saved.Measured.Equal(r.Measured) || hasNote(saved, "cached report ignored") {
				t.Errorf("saved %+v", saved)
			}
			// A second call within maxAge uses what the first saved.
			if tt.maxAge > 0 {
				again, cached, err := Cached(context.Background(), path, tt.maxAge, opts)
				if err != nil || !cached || !again.Measured.Equal(r.Measured) {
					t.Errorf("second call: cached %v, %v", cached, err)
				}
			}
		})
	}
	t.Run("save fails", func(t *testing.T) {
		r, cached, err := Cached(context.Background(), filepath.Join(t.TempDir(), "absent", "hw.json"), time.Hour, opts)
		if err == nil || r == nil || cached || len(r.GPUs) != 2 {
			t.Errorf("%v, %v, %v; want the report and the error", r, cached, err)
		}
	})
	t.Run("measure fails", func(t *testing.T) {
		o := opts
		o.Dir = filepath.Join(t.TempDir(), "absent")
		if r, _, err := Cached(context.Background(), filepath.Join(t.TempDir(), "hw.json"), time.Hour, o); err == nil || r != nil {
			t.Errorf("%v, %v", r, err)
		}
	})
}
