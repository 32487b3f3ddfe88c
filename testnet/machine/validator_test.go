package machine

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/hostround"
)

// TestCheckCPUQueuesChecks: checks asked for in one instant run one after
// another in miner order, each for its samples' core time over the cores,
// a host round's RAM segments as a GPU round's tiles, and a later one
// waits only for those still running.
func TestCheckCPUQueuesChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		check := CheckCPU()
		t0 := time.Now()
		one := 66 * CheckCoreTime[validator.CheckTiles] / ValidatorCores
		ram := 16 * CheckCoreTime[hostround.KindRAM] / ValidatorCores
		ended := make(map[peer.ID]time.Duration)
		var mu sync.Mutex
		var wg sync.WaitGroup
		ask := func(miner peer.ID, kind byte, n int) {
			defer wg.Done()
			check(context.Background(), miner, kind, n)
			mu.Lock()
			ended[miner] = time.Since(t0)
			mu.Unlock()
		}
		wg.Add(2)
		go ask("b", validator.CheckTiles, 66)
		go ask("a", hostround.KindRAM, 16)
		time.Sleep(3 * one)
		wg.Add(1)
		go ask("c", validator.CheckTiles, 33)
		wg.Wait()
		want := map[peer.ID]time.Duration{"a": ram, "b": ram + one, "c": 3*one + one/2}
		for m, w := range want {
			if d := ended[m] - w; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("check for %s ended at %v, want %v", m, ended[m], w)
			}
		}
	})
}
