package scaled

import (
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node/config"
)

// TestSettingsAgainstProduction: the report names each protocol setting
// the testnet changes with its production value and scale, and marks
// those it keeps at production with "=".
func TestSettingsAgainstProduction(t *testing.T) {
	p := Params{EpochLength: 40 * time.Second, Epochs: 3, SlotSchedule: true, Scale: 4.6e-7} // pog testnet's defaults
	got := map[string][3]string{}
	for _, s := range p.Settings() {
		got[s.Name] = [3]string{s.Run, s.Production, s.Scale}
	}
	for name, want := range map[string][3]string{
		"validator.round_target":                {"1s", "10s", "×0.1"},
		"validator.duty_cycle":                  {"0.95", "0.95", "="},
		"validator.host_rounds":                 {"3", "3", "="},
		"validator.host_slot_share":             {"0.125", "0.125", "="},
		"validator.proof_timeout":               {"10s", "", ""},
		"simulated RAM and reference RAM bytes": {"1/1048576", "1", ""},
		"miner.announce_interval":               {"2s", "1m0s", "×0.0333"},
		"miner.max_output_bytes":                {"4 MiB", "16 GiB", "×0.000244"},
	} {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not reported", name)
		case g[0] != want[0] || want[1] != "" && g[1] != want[1] || want[2] != "" && g[2] != want[2]:
			t.Errorf("%s: %v, want %v", name, g, want)
		}
	}
	for _, n := range config.DefaultConfig().Numeric() {
		if _, ok := got[n.Key]; !ok {
			t.Errorf("%s: a numeric setting the report leaves out", n.Key)
		}
	}
	if s := got["network.epoch_length"]; s[0] != p.EpochLength.String() || !strings.HasPrefix(s[2], "×") {
		t.Errorf("epoch length: %v", s)
	}
}

// TestProductionTimingRunsProductionTiming: with ProductionTiming every
// timing setting but the epoch's is production's, and the report says so.
func TestProductionTimingRunsProductionTiming(t *testing.T) {
	p := Params{EpochLength: 400 * time.Second, Epochs: 3, SlotSchedule: true, Scale: 1.5e-7, Sim: true, ProductionTiming: true}
	got := map[string]string{}
	for _, s := range p.Settings() {
		got[s.Name] = s.Scale
	}
	for _, key := range []string{"validator.round_target", "validator.round_target_cpu", "validator.min_steps", "validator.max_steps",
		"validator.deadline", "validator.proof_timeout", "validator.miner_ttl", "validator.round_interval", "validator.first_root_slack",
		"validator.host_cpu_window", "validator.host_max_round", "validator.duty_cycle", "validator.host_slot_share",
		"miner.announce_interval", "miner.proof_window"} {
		if got[key] != "=" {
			t.Errorf("%s: scaled %q with production timing, want =", key, got[key])
		}
	}
	if got["network.epoch_length"] == "=" {
		t.Error("epoch length reported as production's")
	}
}
