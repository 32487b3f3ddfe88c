package epoch_test

import (
	"crypto/rand"
	"math"
	"testing"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// TestProvenHostMean: each kind's part is the mean over its records, a
// missed or failed one counting 0 (SPEC §23.8); the CPU keeps its chains,
// so a miss halves its GHz, not its cores; one kind's records do not
// dilute another's.
func TestProvenHostMean(t *testing.T) {
	c := config.LocalConfig()
	_, id := nodetest.SeededKey(t, 3)
	ann := &pb.MinerAnnounce{Hardware: &pb.Hardware{CpuCores: 2}, RamItems: 1 << 12}
	rec := func(kind byte, verified bool, root time.Duration) *store.HostRecord {
		p, err := plan.Host(c, kind, id, ann, plan.PeriodEpoch(c.Network, 0), 0, 0, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		r := &store.HostRecord{Miner: []byte(id), Challenge: p.Challenge.Encode(), Secret: p.Secret, RootNanos: root.Nanoseconds(), Verdict: store.VerdictFailed, Missed: !verified}
		if verified {
			r.Verdict = store.VerdictVerified
		}
		return r
	}
	one := func(r *store.HostRecord) scoring.HostMeasurement {
		_, m, _ := epoch.HostMeasurement(r)
		return m
	}
	fast, slow := rec(hostround.KindCPU, true, 2*time.Millisecond), rec(hostround.KindCPU, true, 8*time.Millisecond)
	miss, ram := rec(hostround.KindCPU, false, 0), rec(hostround.KindRAM, true, 5*time.Millisecond)
	coreGHz := func(h scoring.Hardware) float64 { return float64(h.CPUCores) * h.CPUGHz }
	alone := epoch.ProvenHost([]*store.HostRecord{fast})
	if alone.CPUCores != 2 || !(alone.CPUGHz > 0) {
		t.Fatalf("one verified CPU record: %+v", alone)
	}
	for _, c := range []struct {
		name  string
		recs  []*store.HostRecord
		cpu   float64 // core·GHz
		cores int
		ram   uint64
	}{
		{"a miss halves the rate", []*store.HostRecord{fast, miss}, coreGHz(alone) / 2, 2, 0},
		{"only misses prove nothing", []*store.HostRecord{miss, miss}, 0, 0, 0},
		{"RAM does not dilute the CPU", []*store.HostRecord{fast, ram}, coreGHz(alone), 2, uint64(one(ram).RAMBytes)},
	} {
		h := epoch.ProvenHost(c.recs)
		if math.Abs(coreGHz(h)-c.cpu) > 1e-9*max(1, c.cpu) || h.CPUCores != c.cores || h.RAMBytes != c.ram {
			t.Errorf("%s: %d cores, %.6g core·GHz, %d RAM bytes; want %d, %.6g, %d", c.name, h.CPUCores, coreGHz(h), h.RAMBytes, c.cores, c.cpu, c.ram)
		}
	}
	// The mean of two rates is their arithmetic mean, not the best.
	want := (one(fast).CPUStepsPerSecond + one(slow).CPUStepsPerSecond) / 2
	if got := epoch.ProvenHost([]*store.HostRecord{fast, slow}).CPUGHz * 2 * 1e9 / scoring.CPUCyclesPerStep; math.Abs(got-want) > 1e-6*want {
		t.Errorf("mean of a fast and a slow CPU record: %.6g steps/s, want %.6g", got, want)
	}
}
