package main

import (
	"io"

	"github.com/pog-network/pog/cmd/pog/internal/bench"
)

func init() {
	r := map[string]flagRange{}
	for name, b := range bench.HostRanges {
		r[name] = flagRange{b.Min, b.Max}
	}
	flagRanges["bench --host"] = r
}

// runBench is `pog bench`, which package bench runs with this command's
// flag conventions.
func runBench(args []string, stdout, stderr io.Writer) int {
	return bench.Run(args, stdout, stderr, parseFlags)
}
