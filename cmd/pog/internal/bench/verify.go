package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// verifyRun is the validator's check of the round once the tiles are in
// (index derivation, batch proof, Freivalds) under one verification
// kernel: its elapsed time, the process CPU time it took on every core,
// and its verdict.
type verifyRun struct {
	Kernel        string  `json:"kernel"`
	Seconds       float64 `json:"verify_seconds"`
	CoreSeconds   float64 `json:"verify_core_seconds"`
	MinersPerCore float64 `json:"miners_per_validator_core"`
	Verified      bool    `json:"verified"`
	Reason        string  `json:"reason,omitempty"`
}

// capacity is what verifying rounds costs a validator at the node's
// default round target and duty cycle. Under a validator set a miner's
// slots last round_target + round_target/4 and a share duty_cycle of them
// hold a round (SPEC §16), and a round's check is its k sampled tiles
// whatever its steps, so one validator core keeps
// slot ÷ (duty_cycle × core-seconds per round) miners under rounds.
type capacity struct {
	RoundTargetSeconds      float64 `json:"round_target_seconds"`
	SlotSeconds             float64 `json:"slot_seconds"`
	DutyCycle               float64 `json:"duty_cycle"`
	CoreSecondsPerMinerHour float64 `json:"verify_core_seconds_per_miner_hour"`
	MinersPerCore           float64 `json:"miners_per_validator_core"`
}

// nodeCapacity is the capacity at config.DefaultConfig's validator settings
// for a check of coreSeconds per round.
func nodeCapacity(coreSeconds float64) capacity {
	v := config.DefaultConfig().Validator
	t := v.RoundTarget.Duration
	c := capacity{RoundTargetSeconds: t.Seconds(), SlotSeconds: (t + t/4).Seconds(), DutyCycle: v.DutyCycle}
	c.CoreSecondsPerMinerHour = 3600 * c.DutyCycle / c.SlotSeconds * coreSeconds
	c.MinersPerCore = c.miners(coreSeconds)
	return c
}

// miners is how many miners one core keeps under rounds at coreSeconds a
// round; 0 where the CPU time is unmeasured (0).
func (c capacity) miners(coreSeconds float64) float64 {
	if coreSeconds <= 0 {
		return 0
	}
	return c.SlotSeconds / (c.DutyCycle * coreSeconds)
}

// verifyKernelNames is the kernels --verify-kernel asks for: one by name,
// or every kernel this CPU runs when it is empty, the node's first.
func verifyKernelNames(name string) ([]string, error) {
	all := proof.VerifyKernels()
	switch {
	case name == "":
		return all, nil
	case slices.Contains(all, name):
		return []string{name}, nil
	}
	return nil, fmt.Errorf("unknown verify kernel %q (this CPU has %s)", name, strings.Join(all, ", "))
}

// verifyEach checks the round under each kernel in turn. Kernels differ
// only in speed, so a verdict or reason that differs is an error.
func verifyEach(tr *proof.Transcript, tiles [][]byte, pr commit.Proof, names []string, prog *progress) ([]verifyRun, error) {
	runs := make([]verifyRun, len(names))
	c := nodeCapacity(0)
	for i, name := range names {
		restore, err := proof.SetVerifyKernel(name)
		if err != nil {
			return nil, err
		}
		t, cpu := time.Now(), processCPU()
		verr := tr.Verify(tiles, pr, nil)
		r := &runs[i]
		r.Kernel, r.Seconds, r.CoreSeconds = name, time.Since(t).Seconds(), (processCPU() - cpu).Seconds()
		restore()
		if prog != nil {
			prog.done("verify "+name, t)
		}
		r.MinersPerCore = c.miners(r.CoreSeconds)
		if f, ok := errors.AsType[*proof.Failure](verr); ok {
			r.Reason = f.Error()
		} else if verr != nil {
			return nil, verr
		}
		r.Verified = verr == nil
		if r.Verified != runs[0].Verified || r.Reason != runs[0].Reason {
			return nil, fmt.Errorf("verify kernels disagree: %s %s, %s %s", runs[0].Kernel, runs[0].verdict(), name, r.verdict())
		}
	}
	return runs, nil
}

func (r *verifyRun) verdict() string {
	if r.Verified {
		return "VERIFIED"
	}
	return "FAILED: " + r.Reason
}

// printVerify is the summary's lines on the validator's check: each
// kernel's time, then what the first kernel's CPU time allows.
func printVerify(w io.Writer, r *benchResult) {
	fmt.Fprintf(w, "verify     %-10s %d sampled tiles catch ≥%.0f%% faked tiles with p = %.4f\n",
		dur(r.VerifySeconds), r.Samples, 100*r.DetectFraction, r.DetectProbability)
	runs := make([]string, len(r.VerifyKernels))
	miners := make([]string, len(r.VerifyKernels))
	for i, k := range r.VerifyKernels {
		runs[i] = fmt.Sprintf("%s %s %.3g core-s", k.Kernel, dur(k.Seconds), k.CoreSeconds)
		miners[i] = fmt.Sprintf("%s %.3g", k.Kernel, k.MinersPerCore)
	}
	fmt.Fprintf(w, "kernels    %s (elapsed, then process CPU time on all cores)\n", strings.Join(runs, ", "))
	fmt.Fprintf(w, "capacity   one validator core keeps slot ÷ (duty cycle × core-s per round) = %.3gs ÷ (%.3g × %.3g) = %.3g miners under rounds,\n",
		r.SlotSeconds, r.DutyCycle, r.VerifyCoreSeconds, r.MinersPerCore)
	fmt.Fprintf(w, "           %.3g core-s per miner-hour, at this shape's check and the node's defaults (round_target %gs, slot 5/4 of it,\n",
		r.CoreSecondsPerMinerHour, r.RoundTargetSeconds)
	fmt.Fprintf(w, "           SPEC §16); miners per core by kernel: %s\n", strings.Join(miners, ", "))
}
