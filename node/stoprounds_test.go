package node

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// A validator told to stop at t stores nothing it starts after t: no GPU
// round, host set or no-show record once its rounds under way have
// ended, though it stored them steadily before t (validators' checks take
// virtual time at their measured CPU cost, so fewer fit under -race).
func TestStopRoundsAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg, ak, stakes, _ := soleHostValidator(t)
		cfg.Validator.RoundTarget = config.Duration{Duration: 4 * time.Second}
		cfg.Validator.RoundTargetCPU = cfg.Validator.RoundTarget
		var mu sync.Mutex
		var stored []time.Time
		note := func() {
			mu.Lock()
			defer mu.Unlock()
			stored = append(stored, time.Now())
		}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key, o.Stakes = ak, stakes
			o.OnRecord = func(*store.RoundRecord) { note() }
			o.OnHost = func(*store.HostRecord) { note() }
		})
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2} })
		tn.connect(m, a)
		stop := time.Now().Add(90 * time.Second)
		a.StopRoundsAt(stop)
		time.Sleep(180 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		// A round or host set started just before stop ends within
		// the round target's deadline and host_max_round.
		settled := stop.Add(cfg.Validator.Deadline.Duration + cfg.Validator.HostMaxRound.Duration)
		var before, after int
		for _, at := range stored {
			switch {
			case at.After(stop.Add(-60*time.Second)) && at.Before(stop):
				before++
			case at.After(settled):
				after++
			}
		}
		t.Logf("%d records in the 60 s before the stop, %d after its rounds settled", before, after)
		if before < 3 || after > 0 {
			t.Errorf("the validator stored %d records in the 60 s before its stop and %d after its last rounds settled (%v after it): want several, then none",
				before, after, settled.Sub(stop))
		}
	})
}
