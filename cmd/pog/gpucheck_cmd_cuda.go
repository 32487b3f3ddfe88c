//go:build cuda

package main

import (
	"io"

	"github.com/pog-network/pog/cmd/pog/internal/bench"
)

func init() {
	commands["gpu-check"] = command{"GPU correctness and speed against the CPU path and a cuBLAS reference (JSON lines)",
		func(args []string, stdout, stderr io.Writer) int {
			return bench.GPUCheck(args, stdout, stderr, parseFlags)
		}}
}
