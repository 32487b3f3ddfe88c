package miner

import (
	"testing"

	"github.com/pog-network/pog/proof/host/memwalk"
)

// A RAM epoch not held is built for the epoch in force or the next one,
// never for one already past: at a period's boundary a challenge for the
// period before cannot make the miner rebuild the dataset it replaced.
func TestRAMEpochBuildable(t *testing.T) {
	period := func(e uint64) memwalk.Epoch { return memwalk.Epoch{Seed: [32]byte{byte(e / 2)}} } // periods of 2 epochs
	in := func(e uint64) (memwalk.Epoch, error) { return period(e), nil }
	for _, c := range []struct {
		now, of uint64 // the challenge at epoch now names the RAM epoch in force at epoch of
		want    bool
	}{
		{4, 4, true}, {4, 5, true}, // in force
		{5, 6, true},  // the next period, a clock ahead
		{4, 3, false}, // the period before, after the boundary
		{4, 8, false}, // far ahead
	} {
		if got := buildable(period(c.of), in, c.now); got != c.want {
			t.Errorf("at epoch %d, the RAM epoch of epoch %d: buildable %v, want %v", c.now, c.of, got, c.want)
		}
	}
}
