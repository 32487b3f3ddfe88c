// Package fmacheck finds fused multiply-adds in a package's arm64 build.
//
// Go may compile x*y + z into one fused instruction that rounds once, where
// amd64 (without GOAMD64=v3) rounds the product and the sum separately, so
// the same source gives different bits on different CPUs. Code whose results
// are compared bit for bit across nodes (scores, weights, consensus) must
// wrap such products in an explicit float64 conversion, which the Go spec
// defines as rounding and so forbids the fusion. Tests call Find to keep it
// that way.
package fmacheck

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// fused matches arm64's fused multiply-add instructions, double and single.
var fused = regexp.MustCompile(`\s(FMADD|FMSUB|FNMADD|FNMSUB)[DS]\s`)

// Find compiles the package in dir for linux/arm64 without cgo, with the
// compiler's assembly listing, and returns the listing lines holding a fused
// multiply-add (each names its source file and line) and the whole listing,
// so callers can check it covers the functions they expect.
func Find(dir string) (hits []string, listing string, err error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, "", fmt.Errorf("no go tool: %w", err)
	}
	cmd := exec.Command(gobin, "build", "-gcflags=-S", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, "", fmt.Errorf("go build for arm64 in %s: %v\n%s", dir, err, out)
	}
	listing = string(out)
	for _, line := range strings.Split(listing, "\n") {
		if fused.MatchString(line) {
			hits = append(hits, strings.TrimSpace(line))
		}
	}
	return hits, listing, nil
}
