package hw

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// CPU describes the host processor. Zero fields are unknown (see the
// report's notes).
type CPU struct {
	// Model is the model name, e.g. "AMD EPYC 9654 96-Core Processor".
	Model string `json:"model"`
	// Arch is Go's GOARCH.
	Arch string `json:"arch"`
	// Sockets counts physical packages.
	Sockets int `json:"sockets"`
	// Cores counts physical cores over all sockets.
	Cores int `json:"cores"`
	// LogicalCPUs counts the processors the kernel lists (online).
	LogicalCPUs int `json:"logical_cpus"`
	// Threads is how many logical CPUs this process may use
	// (runtime.NumCPU: the affinity mask, e.g. a container's cpuset).
	Threads int `json:"threads"`
	// MaxMHz is the highest clock: cpufreq's cpuinfo_max_freq, else the
	// nominal clock in the model name ("@ 2.10GHz").
	MaxMHz float64 `json:"max_mhz"`
	// CurMHz is the mean current clock over the logical CPUs when read.
	CurMHz float64 `json:"cur_mhz"`
}

// CPUInfo is what ParseCPUInfo finds in /proc/cpuinfo.
type CPUInfo struct {
	Model string
	// Logical counts "processor" entries.
	Logical int
	// Sockets counts distinct "physical id" values; 0 if none are listed.
	Sockets int
	// Cores counts distinct ("physical id", "core id") pairs, else
	// "cpu cores" times sockets; 0 if the file says neither (arm64 does
	// not).
	Cores int
	// MeanMHz is the mean of the "cpu MHz" lines; 0 if there are none.
	MeanMHz float64
	// NominalMHz is the clock in the model name ("@ 2.10GHz"), if any.
	NominalMHz float64
}

var nominalClock = regexp.MustCompile(`@\s*([0-9]+(?:\.[0-9]+)?)\s*([GM])Hz`)

// armParts names the Arm Ltd. (implementer 0x41) server cores GPU hosts
// use; arm64 /proc/cpuinfo has no model name.
var armParts = map[string]string{
	"0xd0c": "Neoverse-N1", "0xd40": "Neoverse-V1", "0xd49": "Neoverse-N2",
	"0xd4f": "Neoverse-V2", "0xd8e": "Neoverse-N3", "0xd84": "Neoverse-V3",
}

// ParseCPUInfo reads the text of Linux's /proc/cpuinfo. It is lenient with
// lines it does not understand, and fails only when the text lists no
// processor at all.
func ParseCPUInfo(text string) (CPUInfo, error) {
	var s cpuinfoScan
	for line := range strings.Lines(text) {
		key, value, ok := strings.Cut(line, ":")
		if ok {
			s.field(strings.TrimSpace(key), strings.TrimSpace(value))
		}
	}
	s.endProcessor()
	if s.info.Logical == 0 {
		return CPUInfo{}, errors.New("no processor entries")
	}
	return s.result(), nil
}

// cpuinfoScan is ParseCPUInfo's state: what the whole text has told so far,
// and the fields of the processor entry being read, which count only once
// the entry ends.
type cpuinfoScan struct {
	info              CPUInfo
	sockets           map[string]bool
	cores             map[[2]string]bool
	coresPerSocket    int
	mhzSum            float64
	mhzN              int
	implementer, part string

	inProcessor              bool
	physical, core, cpuCores string // of the current entry
}

func (s *cpuinfoScan) field(key, value string) {
	switch key {
	case "processor":
		if _, err := strconv.Atoi(value); err != nil {
			return
		}
		s.endProcessor()
		s.inProcessor = true
		s.info.Logical++
	case "model name", "cpu model", "Processor": // "Processor": 32-bit ARM
		if s.info.Model == "" {
			s.info.Model = value
		}
	case "cpu":
		// POWER: "cpu : POWER9 (raw), altivec supported".
		if s.info.Model == "" {
			s.info.Model, _, _ = strings.Cut(value, ",")
		}
	case "CPU implementer":
		s.implementer = value
	case "CPU part":
		s.part = value
	case "physical id":
		s.physical = value
	case "core id":
		s.core = value
	case "cpu cores":
		s.cpuCores = value
	case "cpu MHz":
		if f, err := strconv.ParseFloat(value, 64); err == nil && f > 0 && f < 1e6 { // not NaN, Inf
			s.mhzSum += f
			s.mhzN++
		}
	}
}

// endProcessor counts the entry just read towards sockets and cores.
func (s *cpuinfoScan) endProcessor() {
	if !s.inProcessor {
		return
	}
	if s.sockets == nil {
		s.sockets, s.cores = map[string]bool{}, map[[2]string]bool{}
	}
	if s.physical != "" {
		s.sockets[s.physical] = true
	}
	if s.core != "" {
		s.cores[[2]string{s.physical, s.core}] = true
	}
	if n, err := strconv.Atoi(s.cpuCores); err == nil && n > s.coresPerSocket {
		s.coresPerSocket = n
	}
	s.physical, s.core, s.cpuCores = "", "", ""
}

// result derives what no single line says: an Arm model from its part
// number, the core count, the mean and nominal clocks.
func (s *cpuinfoScan) result() CPUInfo {
	info := s.info
	if info.Model == "" && s.implementer != "" {
		if name, ok := armParts[s.part]; ok && s.implementer == "0x41" {
			info.Model = "Arm " + name
		} else {
			info.Model = fmt.Sprintf("CPU implementer %s part %s", s.implementer, s.part)
		}
	}
	info.Sockets = len(s.sockets)
	switch {
	case len(s.cores) > 0:
		info.Cores = len(s.cores)
	case s.coresPerSocket > 0:
		info.Cores = s.coresPerSocket * max(info.Sockets, 1)
	}
	if s.mhzN > 0 {
		info.MeanMHz = s.mhzSum / float64(s.mhzN)
	}
	if m := nominalClock.FindStringSubmatch(info.Model); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "G" {
			f *= 1000
		}
		info.NominalMHz = f
	}
	return info
}

// parseKHz reads a cpufreq file: one integer, in kHz. It returns MHz.
func parseKHz(text string) (float64, error) {
	khz, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cpufreq: %w", err)
	}
	if khz == 0 {
		return 0, errors.New("cpufreq: zero frequency")
	}
	return float64(khz) / 1000, nil
}

// sysCPU is the sysfs directory of the CPUs; a variable for tests.
var sysCPU = "/sys/devices/system/cpu"

// procCPUInfo is Linux's /proc/cpuinfo; a variable for tests.
var procCPUInfo = "/proc/cpuinfo"

// readCPU describes this machine's CPU from /proc/cpuinfo and sysfs,
// falling back to what Go knows.
func readCPU() (CPU, []string) {
	c := CPU{Arch: runtime.GOARCH, Threads: runtime.NumCPU()}
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	text, err := readSmall(procCPUInfo, 4<<20)
	if err != nil {
		note("CPU model and cores unknown: %v", err)
		c.LogicalCPUs = c.Threads
		return c, notes
	}
	info, err := ParseCPUInfo(text)
	if err != nil {
		note("CPU model and cores unknown: %s: %v", procCPUInfo, err)
		c.LogicalCPUs = c.Threads
		return c, notes
	}
	c.Model, c.LogicalCPUs, c.Sockets, c.Cores, c.CurMHz = info.Model, info.Logical, info.Sockets, info.Cores, info.MeanMHz
	if c.Cores == 0 {
		if n, s := topologyCores(sysCPU); n > 0 {
			c.Cores, c.Sockets = n, max(c.Sockets, s)
		} else {
			note("CPU physical cores unknown: %s lists no core ids", procCPUInfo)
		}
	}
	if c.Sockets == 0 && c.Cores > 0 {
		c.Sockets = 1
	}
	cpu0 := filepath.Join(sysCPU, "cpu0", "cpufreq")
	if s, err := readSmall(filepath.Join(cpu0, "cpuinfo_max_freq"), 64); err == nil {
		c.MaxMHz, _ = parseKHz(s)
	}
	if c.MaxMHz == 0 && info.NominalMHz > 0 {
		c.MaxMHz = info.NominalMHz
		note("CPU max frequency: no cpufreq data; using the model name's nominal clock")
	}
	if c.MaxMHz == 0 {
		note("CPU max frequency unknown: no cpufreq data (a VM?) and no clock in the model name")
	}
	if c.CurMHz == 0 {
		if s, err := readSmall(filepath.Join(cpu0, "scaling_cur_freq"), 64); err == nil {
			c.CurMHz, _ = parseKHz(s)
		}
	}
	if c.CurMHz == 0 {
		note("CPU current frequency unknown")
	}
	return c, notes
}

// topologyCores counts distinct (package, core) pairs in sysfs, and the
// packages; zeros when sysfs has no topology.
func topologyCores(dir string) (cores, sockets int) {
	paths, _ := filepath.Glob(filepath.Join(dir, "cpu[0-9]*", "topology", "core_id"))
	seenCores, seenPkgs := map[[2]string]bool{}, map[string]bool{}
	for _, p := range paths {
		core, err := readSmall(p, 64)
		if err != nil {
			continue
		}
		pkg, _ := readSmall(filepath.Join(filepath.Dir(p), "physical_package_id"), 64)
		pkg = strings.TrimSpace(pkg)
		seenCores[[2]string{pkg, strings.TrimSpace(core)}] = true
		seenPkgs[pkg] = true
	}
	return len(seenCores), len(seenPkgs)
}

// readSmall reads a file of at most limit bytes.
func readSmall(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%s: longer than %d bytes", path, limit)
	}
	return string(b), nil
}
