package par

import (
	"runtime"
	"testing"
)

// TestFor: every index runs exactly once, whatever n is against the core
// count, and n = 0 runs nothing.
func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, runtime.GOMAXPROCS(0) + 3, 1000} {
		counts := make([]int, n)
		For(n, func(i int) { counts[i]++ })
		for i, c := range counts {
			if c != 1 {
				t.Fatalf("n=%d: index %d ran %d times", n, i, c)
			}
		}
	}
}
