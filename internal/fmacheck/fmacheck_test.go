package fmacheck

import (
	"fmt"
	"strings"
	"testing"
)

// The fixture's MulAdd must be caught and its Rounded must not: the check
// can fail, and the float64 conversion is what prevents the fusion.
func TestFindCatchesFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for arm64")
	}
	hits, listing, err := Find("testdata/fused")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || !strings.Contains(hits[0], "fused.go:6") {
		t.Fatalf("want exactly one fused instruction, at fused.go:6 (MulAdd); got %q", hits)
	}
	if !strings.Contains(listing, "fused.Rounded") {
		t.Fatal("listing lacks Rounded")
	}
}

// recorder is a testing.TB that keeps Check's errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Check fails on the fixture's fusion when the file is on the path, not when
// it is off it, and fails on a function the listing lacks.
func TestCheckFiltersByFile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for arm64")
	}
	on := &recorder{TB: t}
	Check(on, "testdata/fused", nil, "fused.Rounded", "fused.Missing")
	if len(on.errs) != 2 || !strings.Contains(on.errs[0], "fused.go:6") || !strings.Contains(on.errs[1], "fused.Missing") {
		t.Fatalf("on the path: want the fusion at fused.go:6 and no listing for fused.Missing; got %q", on.errs)
	}
	off := &recorder{TB: t}
	Check(off, "testdata/fused", func(string) bool { return false }, "fused.MulAdd")
	if len(off.errs) != 0 {
		t.Fatalf("off the path: want no errors, got %q", off.errs)
	}
}
