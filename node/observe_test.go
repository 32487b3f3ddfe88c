package node

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// logTap passes a node's log records to a channel (and drops them when
// nobody reads, so it never blocks the node).
type logTap struct {
	ch    chan slog.Record
	attrs []slog.Attr
}

func (l *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTap) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(l.attrs...)
	select {
	case l.ch <- r:
	default:
	}
	return nil
}
func (l *logTap) WithAttrs(as []slog.Attr) slog.Handler {
	return &logTap{ch: l.ch, attrs: append(append([]slog.Attr{}, l.attrs...), as...)}
}
func (l *logTap) WithGroup(string) slog.Handler { return l }

func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// A miner logs its own weight and incentive once per epoch, computed from
// the records it stored as `pog weights` computes them; the validator's
// round and epoch metrics count what it did; the snapshot names the
// validator.
func TestMinerLogsOwnWeightAndMetricsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: 2 * time.Second}
		m := metrics.New()
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Metrics = m })
		tap := &logTap{ch: make(chan slog.Record, 4096)}
		miner, mst := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Logger = slog.New(tap) })
		tn.connect(miner, v)
		deadline := time.After(60 * time.Second)
		var weighed slog.Record
		for weighed.Message == "" {
			select {
			case r := <-tap.ch:
				if r.Message == "epoch weight" && attr(r, "weight").Float64() > 0 {
					weighed = r
				}
			case <-deadline:
				t.Fatal("the miner logged no positive epoch weight")
			}
		}
		e := attr(weighed, "epoch").Uint64()
		res, err := epoch.Consensus(mst, e, nil, consensus.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Miners) != 1 || res.Miners[0] != miner.ID().String() || res.Consensus[0] != attr(weighed, "weight").Float64() ||
			res.Incentive[0] != attr(weighed, "incentive").Float64() {
			t.Fatalf("logged %v, consensus of the stored records: %v %v %v", weighed, res.Miners, res.Consensus, res.Incentive)
		}
		snap := miner.Snapshot()
		if snap.Own == nil || snap.Own.Epoch < e || len(snap.Validators) != 1 || snap.Validators[0].ID != v.ID() || !snap.Validators[0].Connected {
			t.Fatalf("miner snapshot: own %+v validators %+v", snap.Own, snap.Validators)
		}
		if n := testutil.ToFloat64(m.RoundsCounter("verified", "")); n < 1 {
			t.Fatalf("pog_rounds_total{verdict=verified}: %v", n)
		}
		if got, err := testutil.GatherAndCount(m.Registry, "pog_epoch_close_seconds", "pog_gossip_messages_total"); err != nil || got < 2 {
			t.Fatalf("epoch close and gossip series: %d, %v", got, err)
		}
		checkMinerScores(t, m, miner.ID().String(), e)
	})
}

// checkMinerScores: the validator's metrics hold its latest closed epoch's
// score parts (one per part) of its one miner.
func checkMinerScores(t *testing.T, m *metrics.Metrics, miner string, e uint64) {
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]bool{}
	for _, f := range families {
		switch f.GetName() {
		case "pog_miner_score_epoch":
			if got := f.GetMetric()[0].GetGauge().GetValue(); got < float64(e) {
				t.Errorf("pog_miner_score_epoch %v, before epoch %d, which the miner was weighed in", got, e)
			}
		case "pog_miner_score":
			for _, s := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range s.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["miner"] != miner || parts[labels["part"]] {
					t.Errorf("pog_miner_score series %v; the one miner is %s", labels, miner)
				}
				parts[labels["part"]] = true
			}
		}
	}
	if !parts["total"] || !parts["gpu"] || !parts["storage"] {
		t.Errorf("pog_miner_score parts %v", parts)
	}
}

// A miner configured with no validators says so at start.
func TestMinerWarnsWithoutValidators(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.TrustAnyValidator = false
		tap := &logTap{ch: make(chan slog.Record, 4096)}
		tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Logger = slog.New(tap) })
		deadline := time.After(20 * time.Second)
		for {
			select {
			case r := <-tap.ch:
				if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "no validators configured") {
					return
				}
			case <-deadline:
				t.Fatal("no warning about the empty validator list")
			}
		}
	})
}
