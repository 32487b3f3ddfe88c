package main

import (
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// simGC trades memory for collector time in a simulated run, unless GOGC
// or GOMEMLIMIT say otherwise: every node's heap is this process's, and
// at the default GOGC the collector took about a quarter of a large run's
// CPU (BENCHMARKS.md). Half the machine's memory stays the limit.
func simGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(int64(uint64(si.Totalram) * uint64(si.Unit) / 2))
}
