package node

import (
	"crypto/rand"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/node/validator"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// ramItems is the test miners' dataset: 64 KiB.
const ramItems = 1024

// ramPair is a validator and a miner holding a ramItems dataset, RAM host
// rounds of 2^12 steps, the miner's source replaced by src if set.
func ramPair(t *testing.T, src func(*memwalk.Dataset) memwalk.Source) (*Node, *Node) {
	return hostPairWith(t, func(c *config.Config) {
		c.Validator.HostRAMSteps = 1 << 12
		c.Miner.RAMBytes = 64 * ramItems
	}, func(o *Options) { o.Adversary.Miner.RAMSource = src })
}

// playRAM plays a RAM round claiming items items in the RAM epoch of epoch
// (the current one if 0).
func playRAM(t *testing.T, v, m *Node, items, epoch uint64) (*validator.HostResult, *store.HostRecord) {
	t.Helper()
	if epoch == 0 {
		epoch = v.view.epochAt(time.Now())
	}
	res, err := v.validator.RunHost(t.Context(), hostround.KindRAM, m.ID(), &pb.MinerAnnounce{RamItems: items}, epoch, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Record(epoch, 1, m.ID(), v.ID())
}

func TestRAMHostRoundVerified(t *testing.T) {
	v, m := ramPair(t, nil)
	res, rec := playRAM(t, v, m, ramItems, 0)
	if o := res.Out; !o.Verified || !(o.Credit > 0) {
		t.Fatalf("honest RAM round: verified %v credit %v reason %q", o.Verified, o.Credit, o.Reason)
	}
	if err := audit.Host(rec); err != nil {
		t.Fatalf("its record: %v", err)
	}
	k, got, ok := epoch.HostMeasurement(rec)
	want := 64 * ramItems * recordCredit(rec, memwalk.StepBoundNs)
	if !ok || k != hostround.KindRAM || got.RAMBytes < 0.95*want || got.RAMBytes > want*1.05 || !(got.RAMBytesPerSecond > 0) || got.CPUChains != 0 {
		t.Fatalf("measured %+v (kind %d), want about %.0f credited bytes", got, k, want)
	}
}

// recordCredit is min(1, bound ÷ step) over a record's epoch.HostElapsed.
func recordCredit(r *store.HostRecord, boundNs float64) float64 {
	ch, err := hostround.DecodeChallenge(r.Challenge)
	if err != nil {
		panic(err)
	}
	return min(1, boundNs/(float64(epoch.HostElapsed(r).Nanoseconds())/float64(ch.Proof.Dims().Steps)))
}

// TestRAMHostRoundBadProofs: a wrong item is a proven fault naming the
// segment; a claim beyond the dataset held, or a RAM epoch not in force, is
// refused by the miner and missed.
func TestRAMHostRoundBadProofs(t *testing.T) {
	// Another epoch's dataset, held: the walk is as fast as an honest one
	// (recomputing from a cache would be slow enough to miss the root
	// deadline under -race), only its items are wrong.
	cache, err := memwalk.NewCache(&memwalk.Epoch{Seed: [32]byte{9}, CacheLog: 12, Rounds: 64})
	if err != nil {
		t.Fatal(err)
	}
	other, err := memwalk.Build(cache.For([]byte("m")), ramItems, 1)
	if err != nil {
		t.Fatal(err)
	}
	wrong := func(*memwalk.Dataset) memwalk.Source { return other }
	cases := []struct {
		name         string
		src          func(*memwalk.Dataset) memwalk.Source
		items, epoch uint64
		missed       bool
		reason       string
	}{
		{"wrong item", wrong, ramItems, 0, false, memwalk.ErrSegment.Error()},
		{"claims more than it holds", nil, 2 * ramItems, 0, true, "stream closed"},
		{"another ram epoch", nil, ramItems, 1 << 40, true, "stream closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, m := ramPair(t, c.src)
			res, _ := playRAM(t, v, m, c.items, c.epoch)
			if o := res.Out; o.Verified || o.Missed != c.missed || !strings.Contains(o.Reason, c.reason) {
				t.Fatalf("verified %v missed %v reason %q; want missed %v, reason with %q", o.Verified, o.Missed, o.Reason, c.missed, c.reason)
			}
		})
	}
}

// plotNet is testConfig with storage rounds over small plots: 4 KiB blocks
// of 2 rounds.
func plotNet(c *config.Config) {
	c.Network.PlotBlockLog, c.Network.PlotRounds = 12, 2
	c.Validator.HostPlotSteps = 1 << 6
}

// testPlot builds a plot of blocks blocks for id under dir.
func testPlot(t *testing.T, dir string, id peer.ID, blocks uint64) *miner.Plot {
	t.Helper()
	c := testConfig()
	plotNet(&c)
	pl, f, err := miner.OpenPlot(filepath.Join(dir, "plot.bin"), id, uint8(c.Network.PlotBlockLog), c.Network.PlotRounds, blocks<<12, 1, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return pl
}

// plotPair is a validator and a miner (key seed 2) with the plot pl (nil:
// its own of 64 blocks), the miner's reader replaced by r if set.
func plotPair(t *testing.T, pl *miner.Plot, r func(plot.Reader, *plot.Plot) plot.Reader) (*Node, *Node) {
	key, id := nodetest.SeededKey(t, 2)
	if pl == nil {
		pl = testPlot(t, t.TempDir(), id, 64)
	}
	return hostPairWith(t, plotNet, func(o *Options) { o.Key, o.Plot, o.Adversary.Miner.PlotReader = key, pl, r })
}

func playPlot(t *testing.T, v, m *Node, pl *miner.Plot) (*validator.HostResult, *store.HostRecord) {
	t.Helper()
	ann := &pb.MinerAnnounce{Plot: pl.Params.Encode(), PlotRoot: pl.Root[:]}
	res, err := v.validator.RunHost(t.Context(), hostround.KindPlot, m.ID(), ann, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Record(1, 1, m.ID(), v.ID())
}

func TestPlotHostRoundVerified(t *testing.T) {
	v, m := plotPair(t, nil, nil)
	pl := m.miner.Plot
	res, rec := playPlot(t, v, m, pl)
	if o := res.Out; !o.Verified || !(o.Credit > 0) {
		t.Fatalf("honest storage round: verified %v credit %v reason %q", o.Verified, o.Credit, o.Reason)
	}
	if err := audit.Host(rec); err != nil {
		t.Fatalf("its record: %v", err)
	}
	k, got, ok := epoch.HostMeasurement(rec)
	want := float64(pl.Params.Bytes()) * recordCredit(rec, plot.StepBoundNs)
	if !ok || k != hostround.KindPlot || got.StorageBytes < 0.95*want || got.StorageBytes > 1.05*want || !(got.StorageBytesPerSecond > 0) {
		t.Fatalf("measured %+v (kind %d), want about %.0f credited bytes", got, k, want)
	}
}

// TestPlotHostRoundBadProofs: an audit answered from another identity's
// plot, or from altered blocks, is a proven fault with its reason.
func TestPlotHostRoundBadProofs(t *testing.T) {
	_, me := nodetest.SeededKey(t, 2)
	_, them := nodetest.SeededKey(t, 3)
	theirs := testPlot(t, t.TempDir(), them, 64)
	copied := *theirs // their plot's blocks, root and leaves, announced as mine
	copied.Params.Miner = []byte(me)
	flip := func(r plot.Reader, _ *plot.Plot) plot.Reader { return flipped{r} }
	cases := []struct {
		name   string
		pl     *miner.Plot
		r      func(plot.Reader, *plot.Plot) plot.Reader
		reason error
	}{
		{"another identity's plot", &copied, nil, plot.ErrNotRegenerated},
		{"altered blocks", nil, flip, plot.ErrBlockProof},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, m := plotPair(t, c.pl, c.r)
			res, _ := playPlot(t, v, m, m.miner.Plot)
			if o := res.Out; o.Verified || o.Missed || !strings.Contains(o.Reason, c.reason.Error()) {
				t.Fatalf("verified %v missed %v reason %q; want a fault with %q", o.Verified, o.Missed, o.Reason, c.reason)
			}
		})
	}
}

// flipped serves blocks with their first byte flipped.
type flipped struct{ plot.Reader }

func (f flipped) ReadBlock(b uint64, dst []byte) error {
	err := f.Reader.ReadBlock(b, dst)
	dst[0] ^= 1
	return err
}

// TestOpenPlotReopensAndChecksLeaves: a built plot reopens with the same
// root from its leaves file; a leaves file of the wrong size or contents
// is refused with advice to rebuild.
func TestOpenPlotReopensAndChecksLeaves(t *testing.T) {
	_, id := nodetest.SeededKey(t, 2)
	dir := t.TempDir()
	built := testPlot(t, dir, id, 16)
	again := testPlot(t, dir, id, 16)
	if again.Root != built.Root {
		t.Fatal("a reopened plot has another root")
	}
	c := testConfig()
	plotNet(&c)
	path := filepath.Join(dir, "plot.bin")
	leaves, err := os.ReadFile(path + ".leaves")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"short": leaves[:32], "altered": func() []byte {
		x := append([]byte(nil), leaves...)
		for i := 0; i < len(x); i += 32 {
			x[i] ^= 1 // every leaf, so the spot check meets one
		}
		return x
	}()} {
		if err := os.WriteFile(path+".leaves", b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, f, err := miner.OpenPlot(path, id, uint8(c.Network.PlotBlockLog), c.Network.PlotRounds, 16<<12, 1, testLogger(t))
		if err == nil {
			f.Close()
			t.Fatalf("%s leaves file: opened", name)
		}
		if !strings.Contains(err.Error(), "rebuild") {
			t.Fatalf("%s leaves file: %v, want advice to rebuild", name, err)
		}
	}
	if _, _, err := miner.OpenPlot(path, id, uint8(c.Network.PlotBlockLog), c.Network.PlotRounds, 1<<12, 1, testLogger(t)); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a plot file of another size: %v", err)
	}
}

// TestEpochScoreProvenRAMAndStorage: verified RAM and storage records make
// the RAM and storage parts of the epoch score; without them both are 0.
func TestEpochScoreProvenRAMAndStorage(t *testing.T) {
	rv, rm := ramPair(t, nil)
	_, ram := playRAM(t, rv, rm, ramItems, 0)
	pv, pm := plotPair(t, nil, nil)
	_, stor := playPlot(t, pv, pm, pm.miner.Plot)
	hw := epoch.ProvenHost([]*store.HostRecord{ram, stor})
	if !(hw.RAMBytes > 0 && hw.RAMGBps > 0 && hw.StorageBytes > 0 && hw.StorageMBps > 0) || hw.CPUCores != 0 {
		t.Fatalf("proven host %+v: want RAM and storage, no CPU", hw)
	}
	gpu := []scoring.Round{{Precision: scoring.FP16, TFLOPS: 100, Verified: true}}
	c := scoring.DefaultConfig()
	if s, z := scoring.ScoreMiner(c, scoring.Input{Rounds: gpu, ProvenHost: hw}), scoring.ScoreMiner(c, scoring.Input{Rounds: gpu}); !(s.RAM > z.RAM && s.Storage > z.Storage) {
		t.Fatalf("RAM %v storage %v with the records, %v and %v without", s.RAM, s.Storage, z.RAM, z.Storage)
	}
}

// TestHostOpeningsFitTheStore: with the default sizes at their largest
// (256 cores announced, a 30 TB plot, a 2^40-item dataset), each kind's
// opening bound fits a host record, so no honest opening is cut off.
func TestHostOpeningsFitTheStore(t *testing.T) {
	c := config.DefaultConfig()
	c.Validator.HostRAMMaxWalks, c.Validator.HostPlotMaxWalks = config.MaxHostChains, config.MaxHostChains
	_, id := nodetest.SeededKey(t, 2)
	pl := plot.Plot{Miner: []byte(id), BlockLog: uint8(c.Network.PlotBlockLog), Rounds: c.Network.PlotRounds, Blocks: 30e12 >> c.Network.PlotBlockLog}
	ann := &pb.MinerAnnounce{Hardware: &pb.Hardware{CpuCores: 256}, RamItems: memwalk.MaxItems, Plot: pl.Encode(), PlotRoot: make([]byte, 32)}
	for _, k := range []byte{hostround.KindCPU, hostround.KindRAM, hostround.KindPlot} {
		p, err := plan.Host(c, k, id, ann, plan.PeriodEpoch(c.Network, 0), time.Millisecond, 0, rand.Reader)
		if err != nil {
			t.Fatalf("kind %d: %v", k, err)
		}
		if n := p.Challenge.Proof.MaxOpening(int(p.Challenge.Samples)); n > store.MaxHostOpeningLen {
			t.Errorf("%s: openings up to %d bytes, a record holds %d", p.Challenge.Proof.Name(), n, store.MaxHostOpeningLen)
		}
		if b := p.Challenge.Encode(); len(b) > hostround.MaxChallenge || len(b) > store.MaxHostChallengeLen {
			t.Errorf("%s: a %d-byte challenge", p.Challenge.Proof.Name(), len(b))
		}
	}
}

// TestFarPlansValid: a distant miner's RAM and storage rounds (a CPU
// round runs to its window: plan.TestHostPlansAdmissible), sized at the
// bound or at faster measured step times, for one to 256 cores, are valid
// shapes (each kind's segment divides the steps, at most 2^20
// checkpoints) within the miner's work bounds and at most 4 ×
// host_max_round of work at the bound; a one-core round sized for a
// speed up to 3.4× the bound lasts at least 19 round trips and at most
// host_max_round.
func TestFarPlansValid(t *testing.T) {
	c := config.DefaultConfig()
	c.Validator.HostRAMMaxWalks, c.Validator.HostPlotMaxWalks = config.MaxHostChains, config.MaxHostChains
	longest := c.Validator.HostMaxRound.Duration
	_, id := nodetest.SeededKey(t, 2)
	pl := plot.Plot{Miner: []byte(id), BlockLog: uint8(c.Network.PlotBlockLog), Rounds: c.Network.PlotRounds, Blocks: 1 << 20}
	for _, cores := range []uint32{1, 8, 37, 256} {
		ann := &pb.MinerAnnounce{Hardware: &pb.Hardware{CpuCores: cores}, RamItems: 1 << 30, Plot: pl.Encode(), PlotRoot: make([]byte, 32)}
		for _, k := range []byte{hostround.KindRAM, hostround.KindPlot} {
			for _, rtt := range []time.Duration{3 * time.Millisecond, 9 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
				for _, speedup := range []float64{1, 3.4, 8, plan.MaxSizingSpeedup} {
					p, err := plan.Host(c, k, id, ann, plan.PeriodEpoch(c.Network, 0), rtt, 0, rand.Reader)
					if err != nil {
						t.Fatalf("kind %d, %v at the bound: %v", k, rtt, err)
					}
					name, bound := p.Challenge.Proof.Name(), p.Challenge.Proof.BoundNs()
					step := bound / speedup
					if p, err = plan.Host(c, k, id, ann, plan.PeriodEpoch(c.Network, 0), rtt, step, rand.Reader); err != nil {
						t.Fatalf("%s, %d cores, %v, %.0f ns steps: %v", name, cores, rtt, step, err)
					}
					sh := p.Challenge.Proof.Dims()
					work := uint64(hostround.MaxWork)
					if k == hostround.KindPlot {
						work = hostround.MaxPlotWork
					}
					if sh.Chains*sh.Steps > work || time.Duration(float64(sh.Steps)*bound) > plan.MaxGrowthAtBound*longest {
						t.Errorf("%s, %d cores, %v, %.0f ns steps: %d × %d steps", name, cores, rtt, step, sh.Chains, sh.Steps)
					}
					if w := time.Duration(float64(sh.Steps) * step); cores == 1 && speedup <= 3.4 && (w < 19*rtt || w > longest) {
						t.Errorf("%s, %v, %.0f ns steps: %d steps last %v", name, rtt, step, sh.Steps, w)
					}
				}
			}
		}
	}
}

// FuzzDecodeHostChallenge: any bytes decode to a challenge whose encoding
// gives them back and whose parameters validate, or to an error; never a
// panic. Seeds: a challenge of each kind.
func FuzzDecodeHostChallenge(f *testing.F) {
	c := testConfig()
	plotNet(&c)
	pl := plot.Plot{Miner: []byte("miner"), BlockLog: 12, Rounds: 2, Blocks: 64}
	ann := &pb.MinerAnnounce{RamItems: 1000, Plot: pl.Encode(), PlotRoot: make([]byte, 32)}
	c.Validator.HostCPUWindow, c.Validator.HostRAMSteps = config.Duration{Duration: 20 * time.Millisecond}, 1<<10
	for _, k := range []byte{hostround.KindCPU, hostround.KindRAM, hostround.KindPlot} {
		p, err := plan.Host(c, k, "miner", ann, plan.PeriodEpoch(c.Network, 0), 0, 0, rand.Reader)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.Challenge.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ch, err := hostround.DecodeChallenge(b)
		if err != nil {
			return
		}
		if string(ch.Encode()) != string(b) {
			t.Fatalf("decoded %x re-encodes as %x", b, ch.Encode())
		}
		if err := ch.Proof.Validate(); err != nil {
			t.Fatalf("decoded parameters fail validation: %v", err)
		}
	})
}

// TestFarSteps: a distant miner's host round lasts 20 round trips at the
// step time given (rounded up to a multiple of a power of two ≥ 1/16 of
// it), within the work limit, never fewer steps than configured.
func TestFarSteps(t *testing.T) {
	for _, c := range []struct {
		n     uint64
		rtt   time.Duration
		bound float64
		limit uint64
		want  uint64
	}{
		{1 << 20, 0, 100, 1 << 31, 1 << 20},                       // loopback
		{1 << 20, time.Millisecond, 100, 1 << 31, 1 << 20},        // 20 ms at 100 ns: 2e5 steps < 2^20
		{1 << 20, 100 * time.Millisecond, 100, 1 << 31, 10 << 21}, // 2e7 steps, in multiples of 2^21
		{1 << 11, 100 * time.Millisecond, 200e3, 1 << 24, 10 << 10},
		{1 << 20, 100 * time.Millisecond, 100, 1 << 23, 1 << 23},   // capped at the limit
		{1 << 20, 100 * time.Millisecond, 100, 3<<21 + 5, 3 << 21}, // a multiple of 2^21 within it
		{1, time.Nanosecond, 4, 1 << 31, 5},                        // tiny: multiples of 1
		{1 << 24, 100 * time.Millisecond, 100, 1 << 22, 1 << 24},   // configured beyond the limit: kept
	} {
		if got := plan.FarSteps(c.n, c.rtt, c.bound, 1, c.limit, time.Hour); got != c.want {
			t.Errorf("farSteps(%d, %v, %v, %d) = %d, want %d", c.n, c.rtt, c.bound, c.limit, got, c.want)
		}
	}
	// At most a second at 100 ns: 10^7 steps, in multiples of 2^21.
	if got := plan.FarSteps(1<<20, 100*time.Millisecond, 100, 1, 1<<31, time.Second); got != 1<<23 {
		t.Errorf("a round of at most 1 s: %d steps, want 2^23", got)
	}
}

// TestFarRoundsSizedAtMeasuredSpeed: a miner 400 ms away whose steps beat
// the bound loses credit to the capped round-trip subtraction in its first
// round, sized at the bound, and none in the next, sized at the speed the
// first measured; slowing a round down only shortens the next.
func TestFarRoundsSizedAtMeasuredSpeed(t *testing.T) {
	const rtt = 400 * time.Millisecond
	// credit plays one round sized for measured (0: none) by a miner of
	// true step time s: its root arrives after the work and the round
	// trip. It returns the true ÷ credited step time, and the sizing one.
	credit := func(bound, s, measured float64) (float64, float64) {
		n := plan.FarSteps(1<<10, rtt, plan.ExpectedStepNs(measured, bound), 1, hostround.MaxWork, 10*time.Second)
		rec := &store.HostRecord{RootNanos: int64(float64(n)*s) + rtt.Nanoseconds(), RTTNanos: rtt.Nanoseconds()}
		return s * float64(n) / float64(epoch.HostElapsed(rec).Nanoseconds()), plan.SizingStepNs(rec, n)
	}
	for _, c := range []struct {
		kind         string
		bound, speed float64 // the step bound, and how much faster the miner is
	}{{"cpu", cpuwork.StepBoundNs, 3.4}, {"ram", memwalk.StepBoundNs, 8}, {"plot", plot.StepBoundNs, 40}} {
		s := c.bound / c.speed
		first, measured := credit(c.bound, s, 0)
		if first > 0.95 {
			t.Errorf("%s: sized at the bound, credited %.3f of its speed, want the loss this fixes", c.kind, first)
		}
		r, _ := credit(c.bound, s, measured)
		if math.Abs(r-1) > 1e-6 {
			t.Errorf("%s: second round credited %.4f of its speed, want 1", c.kind, r)
		}
		if slow, _ := credit(c.bound, s, 2*s); slow > r {
			t.Errorf("%s: after a round slowed 2×, credited %.4f > honest %.4f", c.kind, slow, r)
		}
	}
}
