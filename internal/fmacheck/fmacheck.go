// Package fmacheck finds fused multiply-adds in a package's arm64 build.
//
// Go may compile x*y + z into one fused instruction that rounds once, where
// amd64 (without GOAMD64=v3) rounds the product and the sum separately, so
// the same source gives different bits on different CPUs. Code whose results
// are compared bit for bit across nodes (scores, weights, consensus) must
// wrap such products in an explicit float64 conversion, which the Go spec
// defines as rounding and so forbids the fusion. Each package on that path
// runs Check in a test to keep it that way.
package fmacheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

// listingPos is a listing line's source position: (path/file.go:line).
var listingPos = regexp.MustCompile(`\((\S+\.go):\d+\)`)

// Check is the test every package on the epoch path runs: it compiles the
// package in dir for arm64 and fails t on a fused multiply-add in one of its
// files for which onPath(base name) is true (nil: every file), or in code
// inlined into it from protocol/ or proof/, whose results are consensus
// wherever they are compiled. It also fails unless the listing covers each
// function in mustList ("pkg.Func", "pkg.(*T).Method"), so a rename cannot
// leave the check passing over nothing.
func Check(t testing.TB, dir string, onPath func(file string) bool, mustList ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the package for arm64")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	hits, listing, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		m := listingPos.FindStringSubmatch(h)
		switch {
		case m == nil:
			t.Errorf("fused multiply-add at an unknown position: %s", h)
		case counts(m[1], abs, onPath):
			t.Errorf("fused multiply-add (wrap the product in float64()): %s", h)
		}
	}
	for _, fn := range mustList {
		if !strings.Contains(listing, fn) {
			t.Errorf("no assembly listing for %s", fn)
		}
	}
}

// counts says whether a fused instruction at path breaks the package in
// pkgDir: its own files on the path, and protocol/ and proof/ code anywhere.
func counts(path, pkgDir string, onPath func(string) bool) bool {
	if filepath.Dir(path) == pkgDir {
		return onPath == nil || onPath(filepath.Base(path))
	}
	return strings.Contains(path, "/protocol/") || strings.Contains(path, "/proof/")
}
