package validator

import (
	"bytes"
	"testing"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
)

// TestHostDueSets: without a slot schedule, set j of an epoch's k host
// sets starts in the first half of the epoch's j-th k-th (hostSetAt), with
// every kind the announce earns, once, whatever the last set's outcome (no
// replays); after k sets nothing more is due; a new epoch starts over.
func TestHostDueSets(t *testing.T) {
	c := config.LocalConfig()
	c.Network.PlotBlockLog, c.Network.PlotRounds = 12, 2
	c.Validator.HostPlotSteps = 1 << 6
	c.Validator.HostCPUWindow, c.Validator.HostRAMSteps, c.Validator.HostRounds = config.Duration{Duration: 20 * time.Millisecond}, 1<<10, 3
	c.Network.EpochLength = config.Duration{Duration: time.Minute}
	_, id := nodetest.SeededKey(t, 2)
	pl := plot.Plot{Miner: []byte(id), BlockLog: 12, Rounds: 2, Blocks: 64}
	e := &minerEntry{epoch: 5, classes: map[proof.Precision]int{proof.FP16: 1},
		ann: &pb.MinerAnnounce{RamItems: 100, Plot: pl.Encode(), PlotRoot: make([]byte, 32)}}
	v := &Validator{env: Env{Config: c}}
	all := []byte{hostround.KindCPU, hostround.KindRAM, hostround.KindPlot}
	epochStart := time.Unix(0, 5*int64(time.Minute))
	set := func(j int) {
		t.Helper()
		from := epochStart.Add(time.Duration(j) * 20 * time.Second)
		if got := v.hostDue(e, id, 5, from.Add(-time.Nanosecond)); got != nil {
			t.Fatalf("set %d: %v due before its part of the epoch", j, got)
		}
		at := e.hostAt
		if at.Before(from) || !at.Before(from.Add(10*time.Second)) {
			t.Fatalf("set %d at %v, want in the first half of [%v, +20s)", j, at.Sub(epochStart), from.Sub(epochStart))
		}
		if got := v.hostDue(e, id, 5, at); !bytes.Equal(got, all) {
			t.Fatalf("set %d: kinds %v, want %v", j, got, all)
		}
		if got := v.hostDue(e, id, 5, at); got != nil {
			t.Fatalf("set %d due twice: %v", j, got)
		}
	}
	set(0)
	set(1)
	set(2)
	if got := v.hostDue(e, id, 5, epochStart.Add(59*time.Second)); got != nil {
		t.Fatalf("a fourth set: %v", got)
	}
	e.epoch = 6
	epochStart = epochStart.Add(time.Minute)
	if got := v.hostDue(e, id, 6, epochStart); got != nil || !e.hostAt.After(epochStart) {
		t.Fatalf("at the epoch's start, before its host point %v: %v", e.hostAt, got)
	}
	if got := v.hostDue(e, id, 6, epochStart.Add(59*time.Second)); !bytes.Equal(got, all) {
		t.Fatalf("next epoch: %v", got)
	}
}
