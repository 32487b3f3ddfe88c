package machine

import (
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
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
	RAMScale     = 1 << 20
	StorageScale = 1 << 25 // a 30 TB host holds a 0.9 MB plot
	// Plots of 4 KiB blocks of 64 layers: a block costs about 1.2 ms to
	// regenerate (the default 64 KiB of 128 layers: about 40 ms) and an
	// opening stays small. Regenerating one from a few kept labels is
	// not the default's trade-off (SPEC §23.4): sparse-plot's step is
	// modelled at the default (adversary.SparsePlotNs).
	PlotBlockLog = 12
	PlotRounds   = 64
	// The default validator's walks, against the testnet's one.
	defaultRAMWalks, defaultPlotWalks = 16, 8
	// BandwidthSlack further divides the reference RAM and storage
	// bandwidths. Every miner walks the same machine's memory and page
	// cache, so the profiles' bandwidths are not simulated: what a walk
	// measures here is how often the shared cores deschedule it, which
	// put honest miners' bandwidth parts (most of a one-GPU miner's
	// score) just below the cap, their incentives up to 30 % apart. With
	// the slack an honest walk reaches the cap up to 8× slower than
	// unloaded (RAM: 447 ns per step, where its credit is already 0.56;
	// storage: 800 µs), while ram-on-disk and storage-regen, whose credit
	// falls with the square of their slowdown, stay far below it.
	BandwidthSlack = 8
)

// HostConfig sets a run's host rounds: one walk each, a few milliseconds
// of work, plots of PlotBlockLog and PlotRounds.
func HostConfig(c *config.Config) {
	c.Network.PlotBlockLog, c.Network.PlotRounds = PlotBlockLog, PlotRounds
	c.Validator.HostRAMMaxWalks, c.Validator.HostPlotMaxWalks = 1, 1
	// 2^17 steps: 4–12 ms over a resident dataset; 2^8 block reads. Under
	// the slot schedule host sets run in host slots; without it, three
	// sets per epoch.
	c.Validator.HostRAMSteps, c.Validator.HostPlotSteps = 1<<17, 1<<8
	c.Validator.HostRounds = 3
	// On the wall clock host rounds do not grow with the round trip:
	// loaded loopback pings of a few ms would grow every round, and the
	// load with them, and the far and distant miners' (400 ms) to seconds
	// of work. Those two lose host credit instead. (In virtual time,
	// scaled.Params.Node lets them grow.)
	c.Validator.HostMaxRound = config.Duration{Duration: time.Millisecond}
}

// ScaleHostReference divides the reference host's RAM and storage by the
// run's factors, and their bandwidths by slack too.
func ScaleHostReference(c *scoring.Config, slack float64) {
	c.Reference.RAMBytes /= RAMScale
	c.Reference.RAMGBps /= defaultRAMWalks * slack
	c.Reference.StorageBytes /= StorageScale
	c.Reference.StorageMBps /= defaultPlotWalks * float64(uint64(1)<<(plot.DefaultBlockLog-PlotBlockLog)) * slack
}

// AttachHost gives a miner its profile's scaled dataset and plot (built in
// home), and the ram-on-disk, storage-regen or sparse-plot adversary its
// cheat. The caller closes the plot.
func AttachHost(o *node.Options, home string, id peer.ID, p Profile, class string, log *slog.Logger) (io.Closer, error) {
	o.Config.Miner.RAMBytes = p.Host.RamBytes / RAMScale
	bytes := p.Host.StorageBytes / StorageScale
	if class == "sparse-plot" {
		bytes *= adversary.SparseFactor // its disk holds 1/SparseFactor of the plot's labels
	}
	pl, f, err := miner.OpenPlot(filepath.Join(home, "plot.bin"), id, uint8(o.Config.Network.PlotBlockLog), o.Config.Network.PlotRounds, bytes, 1, log)
	if err != nil {
		return nil, err
	}
	o.Plot = pl
	switch class {
	case "ram-on-disk":
		o.Adversary.Miner.RAMSource = (&adversary.DiskRAM{Path: filepath.Join(home, "ram.dataset"), Log: log}).Source
	case "storage-regen":
		// The plot was built once for its root and leaves; the audits
		// take a regeneration's time for every block they read.
		cost := adversary.RegenCost(&pl.Params)
		o.Adversary.Miner.PlotReader = func(r plot.Reader, _ *plot.Plot) plot.Reader { return adversary.SlowRegen{Reader: r, Cost: cost} }
	case "sparse-plot":
		// The plot was built whole for its root, leaves and blocks; each
		// read takes what regenerating it from the kept labels takes.
		cost := time.Duration(adversary.SparsePlotNs())
		o.Adversary.Miner.PlotReader = func(r plot.Reader, _ *plot.Plot) plot.Reader { return adversary.SlowRegen{Reader: r, Cost: cost} }
	}
	return f, nil
}
