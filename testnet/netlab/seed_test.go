package netlab

import (
	"math/rand"
	"os"
	"testing"
)

// The process-wide math/rand source GossipSub draws from follows the seed
// (Go ignores rand.Seed without randseednop=0), and GODEBUG is left as it
// was.
func TestSeedLibraries(t *testing.T) {
	prev, had := os.LookupEnv("GODEBUG")
	draw := func(seed int64) [4]int64 {
		SeedLibraries(seed)
		return [4]int64{rand.Int63(), rand.Int63(), rand.Int63(), rand.Int63()}
	}
	a, b, c := draw(7), draw(7), draw(8)
	if a != b {
		t.Errorf("seed 7 twice drew %v and %v", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 drew the same %v", a)
	}
	if now, has := os.LookupEnv("GODEBUG"); now != prev || has != had {
		t.Errorf("GODEBUG %q (set %v) after seeding, was %q (set %v)", now, has, prev, had)
	}
}
