package node

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// TestRAMRoundAfterBoundaryRecord: a validator publishes each epoch
// record at its epoch's finality time less 1.5 link latencies, so the
// honest validator, one link away, freezes it into its final set and the
// miner, two links away, does not. The RAM round of the period that epoch
// once made the beacon of (b + F + 2) still verifies.
func TestRAMRoundAfterBoundaryRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Validator.RoundOffset = config.Duration{Duration: time.Hour} // runHost is called directly
		cfg.Network.EpochLength = config.Duration{Duration: time.Second}
		cfg.Network.RAMPeriodEpochs, cfg.Network.FinalityEpochs = 2, 1
		cfg.Validator.HostRAMSteps = 1 << 12
		cfg.Miner.RAMBytes = 64 * ramItems
		l, f := cfg.Network.EpochLength.Duration, cfg.Network.FinalityEpochs
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Adversary.AlterEpochRecord = func(r *pb.EpochRecord) {
				time.Sleep(time.Until(epoch.FinalAt(r.Epoch, f, l).Add(-3 * simLatency / 2)))
			}
		})
		v, vs := tn.startWith(RoleValidator, cfg, nil, nil)
		m, ms := tn.startWith(RoleMiner, cfg, cpu.Backend{}, nil)
		tn.connect(a, v)
		tn.connect(m, v)
		b := v.view.epochAt(time.Now()) + 1
		b += b % 2 // b + F + 2 starts a period
		time.Sleep(time.Until(epoch.FinalAt(b+1, f, l)))
		counts := func(st *store.Store) bool {
			set, err := st.Final(b)
			return err == nil && !set.IsExcluded([]byte(a.ID())) && slices.ContainsFunc(set.Included,
				func(r store.FinalRecord) bool { return peer.ID(r.Validator) == a.ID() })
		}
		if !counts(vs) || counts(ms) {
			t.Fatalf("the boundary record of epoch %d: in the validator's final set %v, the miner's %v; want only the validator's", b, counts(vs), counts(ms))
		}
		e := b + f + 2
		res, rec := playRAM(t, v, m, ramItems, e)
		if !res.Out.Verified {
			t.Fatalf("RAM round of epoch %d: %q", e, res.Out.Reason)
		}
		if err := audit.Host(rec); err != nil {
			t.Fatalf("its record: %v", err)
		}
	})
}
