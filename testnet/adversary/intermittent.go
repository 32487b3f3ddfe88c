package adversary

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
)

// IntermittentPeriod: the intermittent adversary answers one round in it.
const IntermittentPeriod = 10

// Intermittent is the intermittent adversary's skip hook: up for one
// round in IntermittentPeriod of each validator's, counting GPU and host
// rounds apart, it drops the others. (One count for both let the answered
// ones fall on GPU rounds more often than one in ten: up to a quarter of
// them in an epoch, and 3.3× its due.)
func Intermittent() func(v peer.ID, host bool) bool {
	type key struct {
		v    peer.ID
		host bool
	}
	var mu sync.Mutex
	seen := map[key]int{}
	return func(v peer.ID, host bool) bool {
		mu.Lock()
		defer mu.Unlock()
		k := key{v, host}
		seen[k]++
		return (seen[k]-1)%IntermittentPeriod != 0
	}
}
