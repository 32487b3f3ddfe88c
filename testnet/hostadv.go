package testnet

import (
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host/cpuwork"
)

// gpuStepNs is the cpu-on-gpu adversary's time per chain step: a GPU
// thread's dependent L2 read and emulated 64-bit multiply, three times
// cpuwork's step bound (SPEC §23.2).
const gpuStepNs = 3 * cpuwork.StepBoundNs

// gpuHostProve is the cpu-on-gpu adversary's CPU host proof: every chain
// on its own thread, as a GPU runs them, each segment taking at least
// gpuStepNs per step. The states are honest, so the proof verifies; only
// the timing is a GPU's.
func gpuHostProve(p *cpuwork.Params) ([][]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := cpuwork.Table(p)
	states := make([][]byte, p.Leaves())
	seg := time.Duration(float64(p.Segment) * gpuStepNs)
	var wg sync.WaitGroup
	for c := range p.Chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := cpuwork.Initial(p, c)
			start := time.Now()
			for j := range p.PerChain() {
				cpuwork.Run(t, &x, p.Segment)
				states[c*p.PerChain()+j] = x.Bytes()
				time.Sleep(time.Until(start.Add(time.Duration(j+1) * seg)))
			}
		}()
	}
	wg.Wait()
	return states, nil
}
