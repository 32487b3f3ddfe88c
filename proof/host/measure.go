package host

import (
	"errors"
	"time"
)

// Timing is what a validator measures of one host proof: the time from
// sending the challenge to the checkpoint root's arrival, less the round
// trip measured on the same connection (SPEC §23.1).
type Timing struct {
	Shape
	Elapsed time.Duration
}

// Check refuses a timing no honest run produces.
func (t Timing) Check() error {
	if t.Elapsed <= 0 {
		return errors.New("host proof timing: elapsed time must be positive")
	}
	return t.Shape.Check()
}

// StepNs is the time of one step of one chain: every chain runs its Steps
// dependent steps within Elapsed, whatever runs them in parallel.
func (t Timing) StepNs() float64 { return float64(t.Elapsed.Nanoseconds()) / float64(t.Steps) }

// StepsPerSecond is the steps of all chains per second.
func (t Timing) StepsPerSecond() float64 {
	return float64(t.Chains) * float64(t.Steps) / t.Elapsed.Seconds()
}

// Credit is the fraction of the measured quantity a proof earns:
// min(1, bound ÷ step time). A chain slower than the bound per step (a
// device with a longer latency, or a miner recomputing what it does not
// hold) earns in proportion to how far it misses it.
func (t Timing) Credit(boundNs float64) float64 {
	return min(1, boundNs/t.StepNs())
}
