package netlab

import (
	"math/rand"
	"os"
	"strings"
)

// SeedLibraries seeds the process-wide math/rand source from the run's
// seed. GossipSub draws its mesh, gossip and IWANT choices from it and
// takes no source of its own, so unseeded it sends a run's gossip along
// different paths each time, and that traffic shares the QUIC connections
// whose pacing times the rounds. Only a simulated run may do this: all its
// nodes share the process, and the stream is theirs alone.
//
// Go ignores math/rand.Seed unless GODEBUG has randseednop=0; the setting
// is restored once the source is seeded.
func SeedLibraries(seed int64) {
	prev, had := os.LookupEnv("GODEBUG")
	os.Setenv("GODEBUG", strings.TrimPrefix(prev+",randseednop=0", ","))
	rand.Seed(seed)
	if had {
		os.Setenv("GODEBUG", prev)
	} else {
		os.Unsetenv("GODEBUG")
	}
}
