package hw

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    CPUInfo
		wantErr string
	}{
		{name: "amd epyc vm (this machine)", text: fixture(t, "cpuinfo-amd-epyc-vm.txt"),
			want: CPUInfo{Model: "AMD EPYC", Logical: 2, Sockets: 1, Cores: 2, MeanMHz: 2596.152}},
		{name: "xeon 2 sockets, hyper-threading", text: fixture(t, "cpuinfo-xeon-2s-ht.txt"),
			want: CPUInfo{Model: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Logical: 8, Sockets: 2, Cores: 4,
				MeanMHz: 1975.0625, NominalMHz: 2100}},
		{name: "grace arm64: no model name, no core ids", text: fixture(t, "cpuinfo-grace-arm64.txt"),
			want: CPUInfo{Model: "Arm Neoverse-V2", Logical: 4}},
		{name: "malformed", text: fixture(t, "cpuinfo-malformed.txt"), wantErr: "no processor"},
		{name: "empty", text: "", wantErr: "no processor"},
		{name: "cpu cores without core ids",
			text: "processor : 0\nphysical id : 0\ncpu cores : 8\n\nprocessor : 1\nphysical id : 1\ncpu cores : 8\n",
			want: CPUInfo{Logical: 2, Sockets: 2, Cores: 16}},
		{name: "junk between good entries, bad MHz ignored, MHz clock in model",
			text: "garbage\nprocessor\t: 0\nmodel name : Some CPU @ 800MHz\ncpu MHz : lots\n\x00\x01:\ncore id : 0\n" +
				"processor\t: 1\ncpu MHz : 1000\ncore id : 1\nno colon here\ncpu MHz : +Inf\ncpu MHz : NaN\n",
			want: CPUInfo{Model: "Some CPU @ 800MHz", Logical: 2, Cores: 2, MeanMHz: 1000, NominalMHz: 800}},
		{name: "unknown arm implementer", text: "processor : 0\nCPU implementer : 0x61\nCPU part : 0x022\n",
			want: CPUInfo{Model: "CPU implementer 0x61 part 0x022", Logical: 1}},
		{name: "power", text: "processor : 0\ncpu : POWER9 (raw), altivec supported\nclock : 2300.000000MHz\n",
			want: CPUInfo{Model: "POWER9 (raw)", Logical: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUInfo(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.MeanMHz-tt.want.MeanMHz) > 1e-9 {
				t.Errorf("MeanMHz = %v, want %v", got.MeanMHz, tt.want.MeanMHz)
			}
			got.MeanMHz = tt.want.MeanMHz
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseKHz(t *testing.T) {
	tests := []struct {
		text string
		want float64
		ok   bool
	}{
		{"3700000\n", 3700, true},
		{" 2450000 ", 2450, true},
		{"0\n", 0, false},
		{"", 0, false},
		{"fast", 0, false},
		{"-1", 0, false},
	}
	for _, tt := range tests {
		got, err := parseKHz(tt.text)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseKHz(%q) = %v, %v; want %v, ok %v", tt.text, got, err, tt.want, tt.ok)
		}
	}
}

// fakeSys writes a sysfs CPU tree: topology per CPU and cpu0's cpufreq.
func fakeSys(t *testing.T, topo [][2]string, maxKHz, curKHz string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, pc := range topo {
		cpu := "cpu" + string(rune('0'+i))
		write(filepath.Join(cpu, "topology", "physical_package_id"), pc[0]+"\n")
		write(filepath.Join(cpu, "topology", "core_id"), pc[1]+"\n")
	}
	if maxKHz != "" {
		write("cpu0/cpufreq/cpuinfo_max_freq", maxKHz)
	}
	if curKHz != "" {
		write("cpu0/cpufreq/scaling_cur_freq", curKHz)
	}
	return dir
}

func TestReadCPU(t *testing.T) {
	defer func(p, s string) { procCPUInfo, sysCPU = p, s }(procCPUInfo, sysCPU)
	tests := []struct {
		name      string
		cpuinfo   string
		sys       string
		want      CPU // Arch and Threads are always Go's
		wantNotes []string
	}{
		{name: "vm without cpufreq", cpuinfo: "testdata/cpuinfo-amd-epyc-vm.txt", sys: fakeSys(t, nil, "", ""),
			want:      CPU{Model: "AMD EPYC", Sockets: 1, Cores: 2, LogicalCPUs: 2, CurMHz: 2596.152},
			wantNotes: []string{"CPU max frequency unknown"}},
		{name: "cpufreq max wins over nominal", cpuinfo: "testdata/cpuinfo-xeon-2s-ht.txt", sys: fakeSys(t, nil, "3900000\n", ""),
			want: CPU{Model: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Sockets: 2, Cores: 4, LogicalCPUs: 8,
				MaxMHz: 3900, CurMHz: 1975.0625}},
		{name: "nominal clock when no cpufreq", cpuinfo: "testdata/cpuinfo-xeon-2s-ht.txt", sys: fakeSys(t, nil, "", ""),
			want: CPU{Model: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Sockets: 2, Cores: 4, LogicalCPUs: 8,
				MaxMHz: 2100, CurMHz: 1975.0625},
			wantNotes: []string{"nominal clock"}},
		{name: "arm64: cores from sysfs topology, clocks from cpufreq", cpuinfo: "testdata/cpuinfo-grace-arm64.txt",
			sys:  fakeSys(t, [][2]string{{"0", "0"}, {"0", "1"}, {"0", "2"}, {"0", "3"}}, "3456000", "3400000"),
			want: CPU{Model: "Arm Neoverse-V2", Sockets: 1, Cores: 4, LogicalCPUs: 4, MaxMHz: 3456, CurMHz: 3400}},
		{name: "arm64 without topology", cpuinfo: "testdata/cpuinfo-grace-arm64.txt", sys: fakeSys(t, nil, "", ""),
			want:      CPU{Model: "Arm Neoverse-V2", LogicalCPUs: 4},
			wantNotes: []string{"physical cores unknown", "max frequency unknown", "current frequency unknown"}},
		{name: "malformed cpuinfo", cpuinfo: "testdata/cpuinfo-malformed.txt", sys: fakeSys(t, nil, "", ""),
			want:      CPU{LogicalCPUs: runtime.NumCPU()},
			wantNotes: []string{"CPU model and cores unknown", "no processor entries"}},
		{name: "no cpuinfo (not Linux)", cpuinfo: "testdata/absent", sys: fakeSys(t, nil, "", ""),
			want:      CPU{LogicalCPUs: runtime.NumCPU()},
			wantNotes: []string{"CPU model and cores unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			procCPUInfo, sysCPU = tt.cpuinfo, tt.sys
			got, notes := readCPU()
			tt.want.Arch, tt.want.Threads = runtime.GOARCH, runtime.NumCPU()
			if math.Abs(got.CurMHz-tt.want.CurMHz) > 1e-9 {
				t.Errorf("CurMHz = %v, want %v", got.CurMHz, tt.want.CurMHz)
			}
			got.CurMHz = tt.want.CurMHz
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			all := strings.Join(notes, "\n")
			for _, w := range tt.wantNotes {
				if !strings.Contains(all, w) {
					t.Errorf("notes %q lack %q", notes, w)
				}
			}
			if len(tt.wantNotes) == 0 && len(notes) > 0 {
				t.Errorf("unexpected notes %q", notes)
			}
		})
	}
}

func TestReadCPUThisMachine(t *testing.T) {
	c, notes := readCPU()
	if c.Threads != runtime.NumCPU() || c.Arch != runtime.GOARCH || c.LogicalCPUs < 1 {
		t.Fatalf("%+v %q", c, notes)
	}
	if runtime.GOOS == "linux" && (c.Model == "" || c.Cores < 1) {
		t.Errorf("Linux CPU without model or cores: %+v %q", c, notes)
	}
}
