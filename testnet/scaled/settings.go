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

// Settings compares every numeric node setting of the run, and the
// simulated hardware's scale, with production: what the report says is
// scaled, and by how much.
func (p Params) Settings() []report.Setting {
	run, prod := p.Node(), config.DefaultConfig()
	var out []report.Setting
	defaults := prod.Numeric()
	for i, r := range run.Numeric() {
		d := defaults[i]
		out = append(out, report.Setting{Name: r.Key, Run: r.Text, Production: d.Text, Scale: scale(r.Value, d.Value)})
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
