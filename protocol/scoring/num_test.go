package scoring

import "testing"

func TestNumSmallValues(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1617.6: "1617.6", 0.125: "0.13", 2.1345e-4: "0.000213", 0.05: "0.05", 3e-9: "3e-09"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
