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

// TestHostDueSetsAndRetries: set j of an epoch's k host sets starts in the
// first half of the epoch's j-th k-th (hostSetAt), with every kind the
// announce earns; a missed kind put back is replayed before the next set;
// after k sets nothing more is due; a new epoch starts over.
func TestHostDueSetsAndRetries(t *testing.T) {
	c := config.LocalConfig()
	c.Network.PlotBlockLog, c.Network.PlotRounds = 12, 2
	c.Validator.HostPlotSteps = 1 << 6
	c.Validator.HostCPUSteps, c.Validator.HostRAMSteps, c.Validator.HostRounds = 1<<10, 1<<10, 3
	c.Network.EpochLength = config.Duration{Duration: time.Minute}
	_, id := nodetest.SeededKey(t, 2)
	pl := plot.Plot{Miner: []byte(id), BlockLog: 12, Rounds: 2, Blocks: 64}
	e := &minerEntry{epoch: 5, classes: map[proof.Precision]int{proof.FP16: 1},
		ann: &pb.MinerAnnounce{RamItems: 100, Plot: pl.Encode(), PlotRoot: make([]byte, 32)}}
	v := &Validator{env: Env{Config: c}}
	all := []byte{hostround.KindCPU, hostround.KindRAM, hostround.KindPlot}
	epochStart := time.Unix(0, 5*int64(time.Minute))
	// set plays set j: nothing is due before its window, it is due in
	// it, and once; missed kinds are put back as playHost does.
	set := func(j int, want, missed []byte) {
		t.Helper()
		from := epochStart.Add(time.Duration(j) * 20 * time.Second)
		if got := v.hostDue(e, id, 5, from.Add(-time.Nanosecond)); got != nil {
			t.Fatalf("set %d: %v due before its part of the epoch", j, got)
		}
		if e.hostAt.Before(from) || !e.hostAt.Before(from.Add(10*time.Second)) {
			t.Fatalf("set %d at %v, want in the first half of [%v, +20s)", j, e.hostAt.Sub(epochStart), from.Sub(epochStart))
		}
		if got := v.hostDue(e, id, 5, e.hostAt); !bytes.Equal(got, want) {
			t.Fatalf("set %d: kinds %v, want %v", j, got, want)
		}
		if got := v.hostDue(e, id, 5, e.hostAt); got != nil {
			t.Fatalf("set %d due twice: %v", j, got)
		}
		v.nextHostSet(e, id, 5, missed, e.hostAt)
	}
	set(0, all, nil)
	set(1, all, []byte{hostround.KindRAM})
	retry := e.hostAt
	if got := v.hostDue(e, id, 5, retry); !bytes.Equal(got, []byte{hostround.KindRAM}) {
		t.Fatalf("retry: %v", got)
	}
	v.nextHostSet(e, id, 5, nil, retry)
	set(2, all, nil)
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
