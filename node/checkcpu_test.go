package node

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/store"
)

// TestCheckCPUChargesTheCheck: a validator given a CPU for its checks
// holds each verified round's check there for the round's sampled tiles,
// and the record's verify time is that CPU time, not the free real work
// of a bubble.
func TestCheckCPUChargesTheCheck(t *testing.T) {
	const perTile = 3 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		asked := make(chan int, 64)
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.CheckCPU = func(ctx context.Context, miner peer.ID, tiles int) {
				asked <- tiles
				time.Sleep(time.Duration(tiles) * perTile)
			}
		})
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		deadline := time.After(90 * time.Second)
		for {
			select {
			case r := <-tn.records:
				if peer.ID(r.Miner) != m.ID() || r.Verdict != store.VerdictVerified {
					continue
				}
				var tiles int
				select {
				case tiles = <-asked:
				default:
					t.Fatal("a round was verified without its check asking the CPU")
				}
				if tiles != len(r.Indices) || tiles == 0 {
					t.Fatalf("the CPU was asked for %d tiles, the round sampled %d", tiles, len(r.Indices))
				}
				if got, want := time.Duration(r.VerifyNanos), time.Duration(tiles)*perTile; got != want {
					t.Fatalf("verify time %v, want the check's CPU time %v", got, want)
				}
				return
			case <-deadline:
				t.Fatal("no verified round")
			}
		}
	})
}
