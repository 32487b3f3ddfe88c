package machine

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestCheckCPUQueuesChecks: checks asked for in one instant run one after
// another in miner order, each for its tiles' core time over the cores,
// and a later one waits only for those still running.
func TestCheckCPUQueuesChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		check := CheckCPU()
		t0 := time.Now()
		one := 66 * TileCheckCoreTime / ValidatorCores
		ended := make(map[peer.ID]time.Duration)
		var mu sync.Mutex
		var wg sync.WaitGroup
		ask := func(miner peer.ID, tiles int) {
			defer wg.Done()
			check(context.Background(), miner, tiles)
			mu.Lock()
			ended[miner] = time.Since(t0)
			mu.Unlock()
		}
		wg.Add(2)
		go ask("b", 66)
		go ask("a", 66)
		time.Sleep(3 * one)
		wg.Add(1)
		go ask("c", 33)
		wg.Wait()
		want := map[peer.ID]time.Duration{"a": one, "b": 2 * one, "c": 3*one + one/2}
		for m, w := range want {
			if d := ended[m] - w; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("check for %s ended at %v, want %v", m, ended[m], w)
			}
		}
	})
}
