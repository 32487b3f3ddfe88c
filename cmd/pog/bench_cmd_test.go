package main

import (
	"bytes"
	"strings"
	"testing"
)

// Bad --host shapes are usage errors, the out-of-range ones caught by the
// ranges package bench hands cmd/pog.
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
