package testnet

import (
	"strings"
	"testing"
	"time"
)

// TestThinSlotsWarns: 16 validators in 20 s epochs hold under one round per
// validator and miner (a run of 30 miners so had consensus 0 for every
// miner, BENCHMARKS.md), and the warning names an epoch length holding
// five; the default network's epochs, and a single validator, need none.
func TestThinSlotsWarns(t *testing.T) {
	run := func(validators int, epoch time.Duration) *run {
		cfg := DefaultConfig()
		cfg.EpochLength = epoch
		return &run{cfg: cfg, validatorIDs: make([]string, validators)}
	}
	w := run(16, 20*time.Second).thinSlots()
	if !strings.Contains(w, "about 0.8 rounds per validator and miner among 16 validators") || !strings.Contains(w, "--epoch-length 2m0s") {
		t.Errorf("16 validators, 20 s epochs: %q", w)
	}
	if w := run(16, 2*time.Minute).thinSlots(); w != "" {
		t.Errorf("16 validators, 2 min epochs: %q", w)
	}
	if w := run(6, DefaultConfig().EpochLength).thinSlots(); w != "" {
		t.Errorf("the default network: %q", w)
	}
	if w := run(1, 20*time.Second).thinSlots(); w != "" {
		t.Errorf("one validator: %q", w)
	}
}
