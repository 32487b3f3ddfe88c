package fmacheck

import (
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
