package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pog-network/pog/kernels/hw"
)

func init() {
	commands["hw"] = command{"measure this machine: GPUs (NVML), CPU, RAM and storage", runHW}
}

// hwCacheFile is the report's cache in a node home.
const hwCacheFile = "hw.json"

// hwOptions are what `pog hw` measures with, less the directory; tests
// shrink the sizes and fake the GPUs.
var hwOptions hw.Options

var hwStages = map[hw.Stage]string{
	hw.StageGPUs:         "reading the GPU inventory (NVML)",
	hw.StageGPUBandwidth: "measuring GPU bandwidth",
	hw.StageCPU:          "reading the CPU",
	hw.StageRAM:          "measuring RAM bandwidth",
	hw.StageStorage:      "measuring storage throughput",
}

func runHW(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog hw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := fs.String("home", "", "node home: storage is measured there and the report cached in DIR/"+hwCacheFile+
		" (default: measure the current directory, cache nothing)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	refresh := fs.Bool("refresh", false, "measure again even if the cached report is fresh")
	maxAge := fs.Duration("max-age", 24*time.Hour, "reuse a cached report younger than this")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *maxAge < 0 {
		return usageError(stderr, "hw", fmt.Errorf("--max-age %v is negative", *maxAge))
	}
	opts := hwOptions
	opts.Dir = *home
	if !*quiet {
		opts.Progress = func(s hw.Stage) { fmt.Fprintf(stderr, "pog hw: %s…\n", hwStages[s]) }
	}
	// Interrupted, the measurements stop and remove their temporary file.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var (
		r      *hw.Report
		cached bool
		err    error
		cache  string
	)
	if *home == "" {
		r, err = hw.Measure(ctx, opts)
	} else {
		cache = filepath.Join(*home, hwCacheFile)
		age := *maxAge
		if *refresh {
			age = 0
		}
		r, cached, err = hw.Cached(ctx, cache, age, opts)
	}
	if r == nil {
		fmt.Fprintf(stderr, "pog hw: %v\n", err)
		return 1
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(r); jerr != nil {
			fmt.Fprintf(stderr, "pog hw: %v\n", jerr)
			return 1
		}
	} else {
		printHW(stdout, r, cached, cache)
	}
	if err != nil { // measured, but the cache could not be written
		fmt.Fprintf(stderr, "pog hw: %v\n", err)
		return 1
	}
	return 0
}

// printHW writes the readable report: GPUs, then one line per part, then
// the notes.
func printHW(w io.Writer, r *hw.Report, cached bool, cache string) {
	if len(r.GPUs) == 0 {
		fmt.Fprintln(w, "gpus       none (see the notes)")
	} else {
		bw := false
		for _, g := range r.GPUs {
			bw = bw || g.H2DGBps > 0 || g.D2HGBps > 0 || g.DeviceGBps > 0
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := "GPU\tNAME\tMEMORY\tCC\tPCIe\tSM MHz\tMEM MHz\tPOWER"
		if bw {
			head += "\tH2D/D2H/DEVICE GB/s"
		}
		fmt.Fprintln(tw, head)
		for _, g := range r.GPUs {
			cc := "?"
			if g.ComputeMajor > 0 {
				cc = fmt.Sprintf("%d.%d", g.ComputeMajor, g.ComputeMinor)
			}
			power := "?"
			if g.PowerLimitMW > 0 {
				power = fmt.Sprintf("%.0f W", float64(g.PowerLimitMW)/1000)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", g.Index, orUnknown(g.Name), gib(g.MemoryBytes), cc,
				pcie(g), clocks(g.SMClockMHz, g.SMClockMaxMHz), clocks(g.MemClockMHz, g.MemClockMaxMHz), power)
			if bw {
				fmt.Fprintf(tw, "\t%.1f / %.1f / %.0f", g.H2DGBps, g.D2HGBps, g.DeviceGBps)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if r.Driver != "" || r.CUDA != "" {
		fmt.Fprintf(w, "driver     %s, CUDA %s\n", orUnknown(r.Driver), orUnknown(r.CUDA))
	}

	fmt.Fprintln(w, "host       CPU, RAM and storage below are self-measured, not scored (validators credit only host proofs; pog bench --host runs them)")
	c := r.CPU
	fmt.Fprintf(w, "cpu        %s (%s), %s, %s, %d threads usable of %d; %s now, %s max\n", orUnknown(c.Model), c.Arch,
		plural(c.Sockets, "socket"), plural(c.Cores, "core"), c.Threads, c.LogicalCPUs, mhz(c.CurMHz), mhz(c.MaxMHz))

	m := r.RAM
	ram := gib(m.TotalBytes)
	if m.CopyGBps > 0 {
		ram += fmt.Sprintf(", copy %.1f GB/s (%s buffer, all threads)", m.CopyGBps, mib(m.BufferBytes))
	}
	fmt.Fprintf(w, "ram        %s\n", ram)

	s := r.Storage
	if s.Path != "" {
		line := fmt.Sprintf("%s: %s free of %s", s.Path, gib(s.FreeBytes), gib(s.TotalBytes))
		if s.WriteMBps > 0 {
			how := "page cache dropped"
			if !s.CacheDropped {
				how = "read may be from the page cache"
			}
			line += fmt.Sprintf("; write %.0f MB/s, read %.0f MB/s (%s file, %s)", s.WriteMBps, s.ReadMBps, mib(s.TestBytes), how)
		}
		fmt.Fprintf(w, "storage    %s\n", line)
	}

	when := r.Measured.Local().Format("2006-01-02 15:04:05 MST")
	switch {
	case cached:
		when += fmt.Sprintf(" (cached in %s; --refresh measures again)", cache)
	case cache != "":
		when += fmt.Sprintf(" (saved to %s)", cache)
	}
	fmt.Fprintf(w, "measured   %s\n", when)
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "notes")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func gib(b uint64) string {
	if b == 0 {
		return "? GiB"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func mhz(f float64) string {
	if f <= 0 {
		return "? MHz"
	}
	return fmt.Sprintf("%.0f MHz", f)
}

func plural(n int, what string) string {
	switch n {
	case 0:
		return "? " + what + "s"
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// clocks formats "current/max" MHz, with ? for unknowns.
func clocks(cur, max uint32) string {
	f := func(v uint32) string {
		if v == 0 {
			return "?"
		}
		return fmt.Sprint(v)
	}
	return f(cur) + "/" + f(max)
}

// pcie formats the link, with its maximum when it trained lower (idle GPUs
// drop to a slower generation).
func pcie(g hw.GPU) string {
	link := func(gen, width int) string {
		if gen == 0 && width == 0 {
			return "?"
		}
		var b strings.Builder
		if gen > 0 {
			fmt.Fprintf(&b, "Gen%d", gen)
		} else {
			b.WriteString("Gen?")
		}
		if width > 0 {
			fmt.Fprintf(&b, " x%d", width)
		}
		return b.String()
	}
	cur, max := link(g.PCIeGen, g.PCIeWidth), link(g.PCIeGenMax, g.PCIeWidthMax)
	if cur == max || max == "?" {
		return cur
	}
	return cur + " (max " + max + ")"
}
