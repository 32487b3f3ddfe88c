package node

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
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
			o.CheckCPU = func(ctx context.Context, miner peer.ID, kind byte, tiles int) {
				if kind != validator.CheckTiles {
					return // host rounds' checks: TestCheckCPUChargesHostChecks
				}
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

// TestCheckCPUChargesHostChecks: a host round's check is held there too,
// asked with the round's kind and sampled segments, and its record's
// verify time is that CPU time.
func TestCheckCPUChargesHostChecks(t *testing.T) {
	const perSegment = 2 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg, ak, stakes, _ := soleHostValidator(t)
		type ask struct {
			kind byte
			n    int
		}
		asked := make(chan ask, 64)
		hosts := make(chan *store.HostRecord, 64)
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key, o.Stakes = ak, stakes
			o.OnHost = func(r *store.HostRecord) { hosts <- r }
			o.CheckCPU = func(ctx context.Context, miner peer.ID, kind byte, n int) {
				if kind != validator.CheckTiles {
					asked <- ask{kind, n}
					time.Sleep(time.Duration(n) * perSegment)
				}
			}
		})
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2} })
		tn.connect(m, a)
		deadline := time.After(90 * time.Second)
		for {
			select {
			case r := <-hosts:
				kind, _, ok := epoch.HostMeasurement(r)
				if !ok {
					continue
				}
				var got ask
				select {
				case got = <-asked:
				default:
					t.Fatal("a host round was verified without its check asking the CPU")
				}
				ch, err := hostround.DecodeChallenge(r.Challenge)
				if err != nil {
					t.Fatal(err)
				}
				if got.kind != kind || got.n != int(ch.Samples) || got.n == 0 {
					t.Fatalf("the CPU was asked for kind %d, %d segments; the round was kind %d of %d samples", got.kind, got.n, kind, ch.Samples)
				}
				if v, want := time.Duration(r.VerifyNanos), time.Duration(got.n)*perSegment; v != want {
					t.Fatalf("verify time %v, want the check's CPU time %v", v, want)
				}
				return
			case <-deadline:
				t.Fatal("no verified host round")
			}
		}
	})
}
