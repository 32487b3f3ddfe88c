package node

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/validator"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/store"
)

// TestAbsentMinerRecordedAsNoShow: under a slot schedule a miner that goes
// away stays scheduled for the rest of the epoch, past the announce TTL,
// and every slot the validator owns with it ends in a no-show record,
// counted as missed: its availability falls with each slot it is absent
// for, where before it kept the availability of the rounds it chose.
func TestAbsentMinerRecordedAsNoShow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Hour} // one epoch for the whole test
		key, vid := nodetest.SeededKey(t, 7)
		cfg.Network.Validators, cfg.Network.TrustAnyValidator = []string{vid.String()}, false
		v, st := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key = key })
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		tn.waitVerified([]*Node{v}, []*Node{m}, 2, time.Minute)
		tn.stop(m)
		tn.waitDisconnected(v, m.ID())
		from := time.Now()
		away := 3 * cfg.Validator.MinerTTL.Duration
		time.Sleep(away) // virtual time: the span whose owned slots are counted
		synctest.Wait()  // and the no-shows of its last instant stored
		sch := validator.NewSlotSchedule(vid, nil, cfg.Network.Validators, cfg.Validator).ForMiner(cfg.Validator.RoundTargetCPU.Duration)
		// Owned slots whose opening window ended while the miner was away,
		// from when the validator's own rate limit no longer skips any.
		owned := map[int64]bool{}
		for j := sch.SlotAt(from.Add(challengeEvery)) + 1; sch.Start(j + 1).Before(time.Now()); j++ {
			if sch.Owner([]byte(m.ID()), j) == 0 {
				owned[sch.Start(j).UnixNano()] = true
			}
		}
		noShows := map[int64]bool{}
		for r, err := range st.Rounds(0, ^uint64(0)) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(r.Reason, epoch.NoShowPrefix) {
				noShows[r.SentUnixNano] = true
				if !epoch.MissedRound(r) || r.Verdict != store.VerdictFailed || len(r.Challenge) == 0 {
					t.Fatalf("no-show record %d: verdict %v, missed %v, challenge %d bytes", r.Round, r.Verdict, epoch.MissedRound(r), len(r.Challenge))
				}
			}
		}
		for s := range owned {
			if !noShows[s] {
				t.Errorf("owned slot at %v: no no-show record", time.Unix(0, s).Sub(from))
			}
		}
		if len(owned) < 20 {
			t.Fatalf("%d owned slots in %v away", len(owned), away)
		}
	})
}
