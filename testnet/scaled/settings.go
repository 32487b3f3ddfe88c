package scaled

import (
	"fmt"
	"strconv"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// setting is one protocol setting the report compares with its production
// default: its value in a config, and the number its scale is the ratio of
// (0: not a magnitude).
type setting struct {
	name string
	get  func(config.Config) (string, float64)
}

func dur(d config.Duration) (string, float64) { return d.String(), float64(d.Duration) }
func count[T int | uint32 | uint64](v T) (string, float64) {
	return strconv.FormatUint(uint64(v), 10), float64(v)
}

var settings = []setting{
	{"network.epoch_length", func(c config.Config) (string, float64) { return dur(c.Network.EpochLength) }},
	{"network.ram_period_epochs", func(c config.Config) (string, float64) { return count(c.Network.RAMPeriodEpochs) }},
	{"network.plot_block_log", func(c config.Config) (string, float64) { return count(c.Network.PlotBlockLog) }},
	{"network.plot_rounds", func(c config.Config) (string, float64) { return count(c.Network.PlotRounds) }},
	{"validator.round_target", func(c config.Config) (string, float64) { return dur(c.Validator.RoundTarget) }},
	{"validator.round_target_cpu", func(c config.Config) (string, float64) { return dur(c.Validator.RoundTargetCPU) }},
	{"validator.duty_cycle", func(c config.Config) (string, float64) {
		return strconv.FormatFloat(c.Validator.DutyCycle, 'g', -1, 64), c.Validator.DutyCycle
	}},
	{"validator.min_steps", func(c config.Config) (string, float64) { return count(c.Validator.MinSteps) }},
	{"validator.max_steps", func(c config.Config) (string, float64) { return count(c.Validator.MaxSteps) }},
	{"validator.size", func(c config.Config) (string, float64) { return count(c.Validator.Size) }},
	{"validator.tile_bytes", func(c config.Config) (string, float64) { return count(c.Validator.TileBytes) }},
	{"validator.k", func(c config.Config) (string, float64) { return count(c.Validator.K) }},
	{"validator.deadline", func(c config.Config) (string, float64) { return dur(c.Validator.Deadline) }},
	{"validator.proof_timeout", func(c config.Config) (string, float64) { return dur(c.Validator.ProofTimeout) }},
	{"validator.miner_ttl", func(c config.Config) (string, float64) { return dur(c.Validator.MinerTTL) }},
	{"validator.max_miners", func(c config.Config) (string, float64) { return count(c.Validator.MaxMiners) }},
	{"validator.host_rounds", func(c config.Config) (string, float64) { return count(c.Validator.HostRounds) }},
	{"validator.host_slot_share", func(c config.Config) (string, float64) {
		return strconv.FormatFloat(c.Validator.HostSlotShare, 'g', -1, 64), c.Validator.HostSlotShare
	}},
	{"validator.host_max_round", func(c config.Config) (string, float64) { return dur(c.Validator.HostMaxRound) }},
	{"validator.host_cpu_window", func(c config.Config) (string, float64) { return dur(c.Validator.HostCPUWindow) }},
	{"validator.host_cpu_scale_log", func(c config.Config) (string, float64) { return count(uint32(c.Validator.HostCPUScaleLog)) }},
	{"validator.host_cpu_max_chains", func(c config.Config) (string, float64) { return count(c.Validator.HostCPUMaxChains) }},
	{"validator.host_ram_steps", func(c config.Config) (string, float64) { return count(c.Validator.HostRAMSteps) }},
	{"validator.host_ram_max_walks", func(c config.Config) (string, float64) { return count(c.Validator.HostRAMMaxWalks) }},
	{"validator.host_plot_steps", func(c config.Config) (string, float64) { return count(c.Validator.HostPlotSteps) }},
	{"validator.host_plot_max_walks", func(c config.Config) (string, float64) { return count(c.Validator.HostPlotMaxWalks) }},
	{"node.retain_evidence_epochs", func(c config.Config) (string, float64) { return count(max(0, c.Node.RetainEvidence)) }},
}

// Settings compares the run's node settings, and the simulated hardware's
// scale, with production: what the report says is scaled, and by how much.
func (p Params) Settings() []report.Setting {
	run, prod := p.Node(), config.DefaultConfig()
	var out []report.Setting
	for _, s := range settings {
		rv, rn := s.get(run)
		pv, pn := s.get(prod)
		out = append(out, report.Setting{Name: s.name, Run: rv, Production: pv, Scale: scale(rn, pn)})
	}
	if p.Sim {
		c := machine.CheckCoreTime
		check := fmt.Sprintf("tile %v, CPU %v, RAM %v, storage %v (%d cores)", c[validator.CheckTiles],
			c[hostround.KindCPU], c[hostround.KindRAM], c[hostround.KindPlot], machine.ValidatorCores)
		out = append(out, report.Setting{Name: "validator's check, core time a sampled tile or host segment", Run: check,
			Production: "the same on BENCHMARKS' EPYC, its real time elsewhere", Scale: "="})
	}
	return append(out,
		report.Setting{Name: "simulated device TFLOPS (of the profile's)", Run: strconv.FormatFloat(p.Scale, 'g', 3, 64), Production: "1", Scale: scale(p.Scale, 1)},
		report.Setting{Name: "simulated RAM and reference RAM bytes", Run: fmt.Sprintf("1/%d", machine.RAMScale), Production: "1", Scale: scale(1.0/machine.RAMScale, 1)},
		report.Setting{Name: "simulated storage and reference storage bytes", Run: fmt.Sprintf("1/%d", machine.StorageScale), Production: "1", Scale: scale(1.0/machine.StorageScale, 1)})
}

// scale is run ÷ production as the report shows it: "=" when equal.
func scale(run, prod float64) string {
	switch {
	case run == prod:
		return "="
	case prod == 0:
		return "production 0"
	}
	return "×" + strconv.FormatFloat(run/prod, 'g', 3, 64)
}

// bandwidthSlack is what the reference bandwidths are divided by beyond
// the walks: none where hosts are simulated (Sim).
func (p Params) bandwidthSlack() float64 {
	if p.Sim {
		return 1
	}
	return machine.BandwidthSlack
}

// HostScaleNote states the host scaling in the report.
func (p Params) HostScaleNote() string {
	note := fmt.Sprintf("Simulated hosts: each miner holds a RAM dataset of its profile's RAM ÷ %d and a plot of its storage ÷ %d "+
		"(%d-byte blocks of %d layers); host rounds run one CPU chain, one RAM walk and one storage walk, and the scoring "+
		"reference is divided likewise", machine.RAMScale, machine.StorageScale, 1<<machine.PlotBlockLog, machine.PlotRounds)
	if p.Sim {
		return note + fmt.Sprintf(". Each step takes its profile's time in virtual time: a CPU chain step 64 cycles at the profile's clock, "+
			"a RAM step %d ns (ram-on-disk %d ns), a block read %d µs (storage-regen %.1f ms, sparse-plot %.1f ms).", adversary.DRAMReadNs, adversary.PageCacheReadNs, adversary.FlashReadNs/1000, adversary.RegenBlockNs/1e6, adversary.SparsePlotNs()/1e6)
	}
	return note + fmt.Sprintf(" (its RAM and storage bandwidths by a further %d: every miner walks this one machine's "+
		"memory and page cache, so bandwidths are not simulated, and honest walks reach the cap).", machine.BandwidthSlack)
}
