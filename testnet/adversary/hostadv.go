package adversary

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
)

// gpuStepNs is the cpu-on-gpu adversary's time per chain step: a GPU
// thread's dependent L2 read and emulated 64-bit multiply, three times
// cpuwork's step bound (SPEC §23.2).
const gpuStepNs = 3 * cpuwork.StepBoundNs

// GPUHostProve is the cpu-on-gpu adversary's windowed CPU host proof:
// every chain on its own thread, as a GPU runs them, each step taking
// gpuStepNs (counting the round's step scale), for the whole segments that
// end by stop. The states are honest, so the proof verifies; only the
// timing is a GPU's.
func GPUHostProve(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
	n, done := windowSteps(p, time.Now(), stop, gpuStepNs, p.Chains) // a thread per chain
	if n == 0 {
		return 0, nil, errors.New("no segment within the run")
	}
	q, err := p.Proven(n)
	if err != nil {
		return 0, nil, err
	}
	states, err := cpuwork.Prove(q, int(q.Chains))
	time.Sleep(time.Until(done))
	return n, states, err
}

// SlowRegen is the storage-regen adversary's plot reader: every block takes
// what regenerating it takes, waited out rather than spent on the cores all
// of the testnet's nodes share (a real regenerator spends it on its own
// machine, and here its bursts slowed every honest miner's rounds). The
// bytes are the stored ones, equal to a regeneration's, so its audits verify
// as a regenerator's would; only their timing is a regenerator's.
type SlowRegen struct {
	plot.Reader
	Cost time.Duration
}

func (r SlowRegen) ReadBlock(b uint64, dst []byte) error {
	start := time.Now()
	err := r.Reader.ReadBlock(b, dst)
	time.Sleep(r.Cost - time.Since(start))
	return err
}

// RegenCost is the median time of regenerating one of p's blocks, of 9.
func RegenCost(p *plot.Plot) time.Duration {
	dst := make([]byte, p.BlockBytes())
	ts := make([]time.Duration, 9)
	for i := range ts {
		start := time.Now()
		p.Generate(uint64(i)%p.Blocks, dst)
		ts[i] = time.Since(start)
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// DiskRAM is the ram-on-disk adversary: it keeps its dataset in a file
// and reads one item per walk step from it.
type DiskRAM struct {
	Path string
	Log  *slog.Logger
	mu   sync.Mutex
	of   *memwalk.Dataset
	src  *memwalk.DiskSource
}

// Source serves d from the file, writing it there first if d is new. If
// the file cannot be written it serves d itself (and says so).
func (r *DiskRAM) Source(d *memwalk.Dataset) memwalk.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.of == d {
		return r.src
	}
	if r.src != nil {
		r.src.Close()
	}
	r.of, r.src = d, nil
	err := removeIfExists(r.Path)
	if err == nil {
		err = d.WriteFile(r.Path)
	}
	if err == nil {
		r.src, err = memwalk.OpenDiskSource(r.Path, d.Items())
	}
	if err != nil {
		r.Log.Error("ram-on-disk cannot keep its dataset on disk", "err", err)
		r.of = nil
		return d
	}
	return r.src
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
