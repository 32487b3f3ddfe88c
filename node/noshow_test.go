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
		noShows := noShowSlots(t, st)
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

// TestLateMinerCountedFromEpochStart: a miner the validator first hears
// from late in an epoch is scored for the epoch from its start, or from one
// miner_ttl after the validator's own start if later: each slot the
// validator owned with it in that span ends in a no-show, and none before.
// A miner unconnected until one owned slot late in each epoch otherwise had
// availability 1 for one round's work.
func TestLateMinerCountedFromEpochStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Hour} // the bubble starts at an epoch's start
		key, vid := nodetest.SeededKey(t, 7)
		cfg.Network.Validators, cfg.Network.TrustAnyValidator = []string{vid.String()}, false
		time.Sleep(5 * time.Minute)
		v, st := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key = key })
		counted := time.Now().Add(cfg.Validator.MinerTTL.Duration)
		time.Sleep(cfg.Validator.MinerTTL.Duration + 10*time.Minute)
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		joined := time.Now()
		tn.connect(m, v)
		for r := range tn.records { // the backfilled no-shows come first
			if r.Verdict == store.VerdictVerified {
				break
			}
		}
		synctest.Wait()
		sch := validator.NewSlotSchedule(vid, nil, cfg.Network.Validators, cfg.Validator).ForMiner(cfg.Validator.RoundTargetCPU.Duration)
		noShows := noShowSlots(t, st)
		owned := 0
		for j := sch.SlotAt(counted.Add(-2 * time.Minute)); sch.Start(j).Add(sch.Slot / 8).Before(joined); j++ {
			if sch.Owner([]byte(m.ID()), j) != 0 {
				continue
			}
			at := sch.Start(j)
			switch want := at.After(counted); {
			case want:
				owned++
				if !noShows[at.UnixNano()] {
					t.Errorf("owned slot %v into the counted span, before the miner came: no no-show", at.Sub(counted))
				}
			case noShows[at.UnixNano()]:
				t.Errorf("owned slot %v before the counted span: a no-show", counted.Sub(at))
			}
		}
		if owned < 20 {
			t.Fatalf("%d owned slots in the %v before the miner came", owned, joined.Sub(counted))
		}
	})
}

// noShowSlots is the slot starts (unix ns) of st's no-show records, each
// checked to be a missed, failed record holding its challenge.
func noShowSlots(t *testing.T, st *store.Store) map[int64]bool {
	t.Helper()
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
	return noShows
}
