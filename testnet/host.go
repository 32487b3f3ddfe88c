package testnet

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/testnet/adversary"
)

// Simulated hosts (SPEC §23.9): every miner holds a RAM dataset and a plot
// of its profile's sizes divided by these factors, so that a run fits 2
// cores and a few hundred MiB, and the scoring reference is divided by
// the same factors. Host rounds measure one CPU chain and one RAM or
// storage walk (miners share the machine's cores), so the reference
// bandwidths are divided by the validator's default walks as well.
const (
	// A 2 TiB host holds a 2 MiB dataset: small enough that this
	// machine's walks over it run at cache speed, as a bare-metal host's
	// do over DRAM, and not at its virtualised DRAM's 400–700 ns (which
	// would put honest walks past the step bound, their credit noisy).
	ramScale     = 1 << 20
	storageScale = 1 << 25 // a 30 TB host holds a 0.9 MB plot
	// Plots of 4 KiB blocks of 64 rounds: a block costs about 1.2 ms to
	// regenerate (the default 64 KiB of 16 rounds: 4.7 ms) and an
	// opening stays small (SPEC §23.4's bound holds: ≥ 6× the step bound).
	plotBlockLog = 12
	plotRounds   = 64
	// The default validator's walks, against the testnet's one.
	defaultRAMWalks, defaultPlotWalks = 16, 8
	// bandwidthSlack further divides the reference RAM and storage
	// bandwidths. Every miner walks the same machine's memory and page
	// cache, so the profiles' bandwidths are not simulated: what a walk
	// measures here is how often the shared cores deschedule it, which
	// put honest miners' bandwidth parts (most of a one-GPU miner's
	// score) just below the cap, their incentives up to 30 % apart. With
	// the slack an honest walk reaches the cap up to 8× slower than
	// unloaded (RAM: 447 ns per step, where its credit is already 0.56;
	// storage: 800 µs), while ram-on-disk and storage-regen, whose credit
	// falls with the square of their slowdown, stay far below it.
	bandwidthSlack = 8
)

// hostConfig sets a run's host rounds: one walk each, a few milliseconds
// of work, plots of plotBlockLog and plotRounds.
func hostConfig(c *node.Config) {
	c.Network.PlotBlockLog, c.Network.PlotRounds = plotBlockLog, plotRounds
	c.Validator.HostRAMMaxWalks, c.Validator.HostPlotMaxWalks = 1, 1
	// 2^17 steps: 4–12 ms over a resident dataset; 2^8 block reads. Three
	// sets per epoch, the best counting: on cores shared by every node a
	// round's thread is often descheduled, and a short round's best of
	// three is what the host can do.
	c.Validator.HostRAMSteps, c.Validator.HostPlotSteps = 1<<17, 1<<8
	c.Validator.HostRounds = 3
	// Host rounds do not grow with the round trip: loaded loopback pings
	// of a few ms would grow every round, and the load with them, and the
	// far and distant miners' (400 ms) to seconds of work. Those two lose
	// host credit instead.
	c.Validator.HostMaxRound = node.Duration{Duration: time.Millisecond}
}

// scaleHostReference divides the reference host's RAM and storage by the
// run's factors, and their bandwidths by slack too.
func scaleHostReference(c *scoring.Config, slack float64) {
	c.Reference.RAMBytes /= ramScale
	c.Reference.RAMGBps /= defaultRAMWalks * slack
	c.Reference.StorageBytes /= storageScale
	c.Reference.StorageMBps /= defaultPlotWalks * float64(uint64(1)<<(plot.DefaultBlockLog-plotBlockLog)) * slack
}

// bandwidthSlack is what the reference bandwidths are divided by beyond
// the walks: none where hosts are simulated (Sim).
func (r *run) bandwidthSlack() float64 {
	if r.cfg.Sim {
		return 1
	}
	return bandwidthSlack
}

// hostScaleNote states the host scaling in the report.
func (r *run) hostScaleNote() string {
	note := fmt.Sprintf("Simulated hosts: each miner holds a RAM dataset of its profile's RAM ÷ %d and a plot of its storage ÷ %d "+
		"(%d-byte blocks of %d rounds); host rounds run one CPU chain, one RAM walk and one storage walk, and the scoring "+
		"reference is divided likewise", ramScale, storageScale, 1<<plotBlockLog, plotRounds)
	if r.cfg.Sim {
		return note + fmt.Sprintf(". Each step takes its profile's time in virtual time: a CPU chain step 64 cycles at the profile's clock, "+
			"a RAM step %d ns (ram-on-disk %d ns), a block read %d µs (storage-regen %.1f ms).", adversary.DRAMReadNs, adversary.PageCacheReadNs, adversary.FlashReadNs/1000, adversary.RegenBlockNs/1e6)
	}
	return note + fmt.Sprintf(" (its RAM and storage bandwidths by a further %d: every miner walks this one machine's "+
		"memory and page cache, so bandwidths are not simulated, and honest walks reach the cap).", bandwidthSlack)
}

// minerHost gives a miner its profile's scaled dataset and plot (built in
// home), and the ram-on-disk or storage-regen adversary its cheat. The
// caller closes the plot.
func minerHost(o *node.Options, home string, id peer.ID, p Profile, class string, log *slog.Logger) (io.Closer, error) {
	o.Config.Miner.RAMBytes = p.Host.RamBytes / ramScale
	pl, f, err := miner.OpenPlot(filepath.Join(home, "plot.bin"), id, uint8(o.Config.Network.PlotBlockLog), o.Config.Network.PlotRounds, p.Host.StorageBytes/storageScale, 1, log)
	if err != nil {
		return nil, err
	}
	o.Plot = pl
	switch class {
	case "ram-on-disk":
		o.RoundHooks.RAMSource = (&adversary.DiskRAM{Path: filepath.Join(home, "ram.dataset"), Log: log}).Source
	case "storage-regen":
		// The plot was built once for its root and leaves; the audits
		// take a regeneration's time for every block they read.
		cost := adversary.RegenCost(&pl.Params)
		o.RoundHooks.PlotReader = func(r plot.Reader, _ *plot.Plot) plot.Reader { return adversary.SlowRegen{Reader: r, Cost: cost} }
	}
	return f, nil
}
