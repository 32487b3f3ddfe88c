package config

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
)

// maxConfigBytes bounds config.toml.
const maxConfigBytes = 1 << 20

// Host round shapes the validator settings must fit; the validator's
// planning sizes its challenges by them.
const (
	// HostCheckpoints is the number of segments per CPU chain.
	HostCheckpoints = 256
	// MaxHostChains bounds the chains or walks of any host round.
	MaxHostChains = 256
	// PlotSegment is a storage audit's steps per segment.
	PlotSegment = 4
)

// rangeKind says how a setting's values read.
type rangeKind int

const (
	count rangeKind = iota
	bytesKind
	duration
	fraction
)

// configRange is the allowed range, inclusive, of one numeric setting.
// Values past the range are refused at load, naming the key: a 1 ns round
// interval busy-loops, a queue of 2^63 challenges panics in make.
type configRange struct {
	key      string // section.key, as in config.toml
	kind     rangeKind
	min, max float64 // durations in nanoseconds
	get      func(*Config) any
}

// number is v (an integer or a Duration) as a float64, exact below 2^53
// and past any range above it.
func number(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint8:
		return float64(v)
	case uint32:
		return float64(v)
	case uint64:
		return float64(v)
	case float64:
		return v
	case Duration:
		return float64(v.Duration)
	}
	panic(fmt.Sprintf("config range of a %T", v))
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	day = 24 * time.Hour
)

// configRanges is every bounded setting. A new numeric setting gets a row
// here (TestEveryNumericSettingHasARange checks); relations between
// settings (low <= high) stay in Validate.
var configRanges = []configRange{
	{"node.conn_low_water", count, 1, 100_000, func(c *Config) any { return c.Node.LowWater }},
	{"node.conn_high_water", count, 1, 100_000, func(c *Config) any { return c.Node.HighWater }},
	{"node.proof_stream_memory", bytesKind, 1 * mib, 64 * gib, func(c *Config) any { return c.Node.ProofStreamMemory }},
	{"node.retain_evidence_epochs", count, -1, 1 << 20, func(c *Config) any { return c.Node.RetainEvidence }},
	{"network.finality_epochs", count, 1, 1000, func(c *Config) any { return c.Network.FinalityEpochs }},
	{"network.epoch_length", duration, float64(time.Second), float64(30 * day), func(c *Config) any { return c.Network.EpochLength }},
	{"miner.workers", count, 0, 4096, func(c *Config) any { return c.Miner.Workers }},
	{"miner.max_output_bytes", bytesKind, 8 * kib, proof.MaxOutputBytes, func(c *Config) any { return c.Miner.MaxOutputBytes }},
	{"miner.announce_interval", duration, float64(100 * time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Miner.AnnounceInterval }},
	{"miner.queue_length", count, 1, 1024, func(c *Config) any { return c.Miner.QueueLength }},
	{"miner.proof_window", duration, float64(time.Second), float64(time.Hour), func(c *Config) any { return c.Miner.ProofWindow }},
	{"validator.round_interval", duration, float64(100 * time.Millisecond), float64(day), func(c *Config) any { return c.Validator.RoundInterval }},
	{"validator.round_offset", duration, 0, float64(day), func(c *Config) any { return c.Validator.RoundOffset }},
	{"validator.size", count, proof.MinTile, proof.MaxDim, func(c *Config) any { return c.Validator.Size }},
	{"validator.k", count, 1, proof.MaxDim, func(c *Config) any { return c.Validator.K }},
	{"validator.deadline", duration, float64(100 * time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.Deadline }},
	{"validator.proof_timeout", duration, float64(100 * time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.ProofTimeout }},
	{"validator.duty_cycle", fraction, 0.01, 1, func(c *Config) any { return c.Validator.DutyCycle }},
	{"validator.round_target", duration, float64(100 * time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.RoundTarget }},
	{"validator.round_target_cpu", duration, float64(100 * time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.RoundTargetCPU }},
	{"validator.min_steps", count, 2, proof.MaxSteps, func(c *Config) any { return c.Validator.MinSteps }},
	{"validator.max_steps", count, 2, proof.MaxSteps, func(c *Config) any { return c.Validator.MaxSteps }},
	{"validator.min_rtt_multiple", fraction, 1, 1000, func(c *Config) any { return c.Validator.MinRTTMultiple }},
	{"validator.first_root_slack", duration, float64(time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.FirstRootSlack }},
	{"validator.host_cpu_window", duration, 0, float64(cpuwork.MaxWindowMs * time.Millisecond), func(c *Config) any { return c.Validator.HostCPUWindow }},
	{"validator.host_cpu_scale_log", count, 0, cpuwork.MaxScaleLog, func(c *Config) any { return c.Validator.HostCPUScaleLog }},
	{"validator.host_cpu_max_chains", count, 1, MaxHostChains, func(c *Config) any { return c.Validator.HostCPUMaxChains }},
	{"validator.host_ram_steps", count, 0, hostround.MaxWork, func(c *Config) any { return c.Validator.HostRAMSteps }},
	{"validator.host_ram_max_walks", count, 1, MaxHostChains, func(c *Config) any { return c.Validator.HostRAMMaxWalks }},
	{"validator.host_plot_steps", count, 0, 1 << 20, func(c *Config) any { return c.Validator.HostPlotSteps }},
	{"validator.host_plot_max_walks", count, 1, MaxHostChains, func(c *Config) any { return c.Validator.HostPlotMaxWalks }},
	{"validator.host_rounds", count, 1, 16, func(c *Config) any { return c.Validator.HostRounds }},
	{"validator.host_slot_share", fraction, 0.01, 0.5, func(c *Config) any { return c.Validator.HostSlotShare }},
	{"validator.max_miners", count, 1, protocol.MaxEpochMiners, func(c *Config) any { return c.Validator.MaxMiners }},
	{"validator.host_max_round", duration, float64(time.Millisecond), float64(time.Hour), func(c *Config) any { return c.Validator.HostMaxRound }},
	{"network.ram_period_epochs", count, 1, 1 << 20, func(c *Config) any { return c.Network.RAMPeriodEpochs }},
	{"network.ram_cache_log", count, memwalk.MinCacheLog, memwalk.MaxCacheLog, func(c *Config) any { return c.Network.RAMCacheLog }},
	{"network.ram_item_rounds", count, memwalk.MinRounds, memwalk.MaxRounds, func(c *Config) any { return c.Network.RAMItemRounds }},
	{"network.plot_block_log", count, plot.MinBlockLog, plot.MaxBlockLog, func(c *Config) any { return c.Network.PlotBlockLog }},
	{"network.plot_rounds", count, plot.MinRounds, plot.MaxRounds, func(c *Config) any { return c.Network.PlotRounds }},
	{"miner.ram_bytes", bytesKind, 0, memwalk.MaxItems * 64, func(c *Config) any { return c.Miner.RAMBytes }},
	{"miner.plot_bytes", bytesKind, 0, plot.MaxBlocks << plot.MaxBlockLog, func(c *Config) any { return c.Miner.PlotBytes }},
	{"validator.miner_ttl", duration, float64(time.Second), float64(7 * day), func(c *Config) any { return c.Validator.MinerTTL }},
}

// checkRanges returns an error, naming the key, for each setting outside
// its range.
func (c *Config) checkRanges() []settingError {
	var errs []settingError
	for _, r := range configRanges {
		if v := r.get(c); !(number(v) >= r.min && number(v) <= r.max) {
			errs = append(errs, settingError{[]string{r.key}, fmt.Sprintf("%s = %v: want %s", r.key, v, r.doc())})
		}
	}
	return errs
}

// Numeric is one numeric setting's value: Key as in config.toml, Value
// as a number (durations in nanoseconds) and Text as config.toml would
// read it.
type Numeric struct {
	Key, Text string
	Value     float64
}

// Numeric lists every numeric setting of c in configRanges' order: what a
// report comparing two configurations (the testnet's with production)
// walks, so that no setting is left out of it.
func (c Config) Numeric() []Numeric {
	out := make([]Numeric, len(configRanges))
	for i, r := range configRanges {
		v := number(r.get(&c))
		out[i] = Numeric{Key: r.key, Text: r.format(v), Value: v}
	}
	return out
}

func (r configRange) format(v float64) string {
	switch r.kind {
	case duration:
		return time.Duration(v).String()
	case bytesKind:
		for _, u := range []struct {
			n    float64
			name string
		}{{gib, "GiB"}, {mib, "MiB"}, {kib, "KiB"}} {
			if v >= u.n && math.Mod(v, u.n) == 0 {
				return fmt.Sprintf("%.0f %s", v/u.n, u.name)
			}
		}
	}
	if r.kind == fraction {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func (r configRange) doc() string { return r.format(r.min) + " to " + r.format(r.max) }

// rangeDoc is the " (range: …)" note WriteConfig adds to key's comment, or
// "" for a setting without one.
func rangeDoc(key string) string {
	for _, r := range configRanges {
		if r.key == key {
			return " (range: " + r.doc() + ")"
		}
	}
	return ""
}

// backendNames are the compute backends a config may name: those built in,
// and cuda, which a build without it replaces by the CPU with a warning.
func backendNames() []string {
	names := kernels.Names()
	if !slices.Contains(names, "cuda") {
		names = append(names, "cuda")
	}
	return names
}

func knownBackend(name string) bool { return slices.Contains(backendNames(), name) }
