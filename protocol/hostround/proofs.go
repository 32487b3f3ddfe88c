package hostround

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/scoring"
)

// The three host proofs (SPEC §23) as a host round plays them: what the
// wire carries, what the validator checks and what a verified round
// credits.

// Host round kinds, the first byte of a host challenge.
const (
	KindCPU  = 1
	KindRAM  = 2
	KindPlot = 3
)

// plotRegenerated is how many sampled segments' first blocks a validator
// regenerates per storage audit (plot.CheckRegenerated): 2 × 4.7 ms at the
// default plot, and what binds the plot to the miner's identity.
const plotRegenerated = 2

// Proof is one host challenge's parameters.
type Proof interface {
	Validate() error
	Kind() byte
	Name() string // in logs: cpu, ram, storage
	Tag() string  // in checkpoint leaves
	MinerID() []byte
	Dims() host.Shape
	Encode() []byte // the canonical encoding, sampled over
	BoundNs() float64
	// MaxSample caps the sample (0: host.MaxSegments).
	MaxSample() int
	// MaxOpening bounds the opening of samples segments.
	MaxOpening(samples int) int
	// Verify checks an opening of the sampled segments against root.
	Verify(root commit.CV, segs []uint64, opening []byte) error
	// Credited is what a verified round of this elapsed time credits.
	Credited(elapsed time.Duration) scoring.HostMeasurement
}

// The proofs of each kind.
type (
	CPUProof  struct{ *cpuwork.Params }
	RAMProof  struct{ *memwalk.Params }
	PlotProof struct{ *plot.Audit }
)

// DecodeProof decodes a proof of kind from its canonical encoding.
func DecodeProof(kind byte, b []byte) (Proof, error) {
	switch kind {
	case KindCPU:
		p, err := cpuwork.DecodeParams(b)
		return CPUProof{p}, err
	case KindRAM:
		p, err := memwalk.DecodeParams(b)
		return RAMProof{p}, err
	case KindPlot:
		a, err := plot.DecodeAudit(b)
		return PlotProof{a}, err
	}
	return nil, fmt.Errorf("host challenge of unknown kind %d", kind)
}

func (CPUProof) Kind() byte   { return KindCPU }
func (RAMProof) Kind() byte   { return KindRAM }
func (PlotProof) Kind() byte  { return KindPlot }
func (CPUProof) Name() string { return "cpu" }
func (RAMProof) Name() string { return "ram" }
func (PlotProof) Name() string {
	return "storage"
}
func (CPUProof) Tag() string         { return cpuwork.Tag }
func (RAMProof) Tag() string         { return memwalk.Tag }
func (PlotProof) Tag() string        { return plot.Tag }
func (p CPUProof) MinerID() []byte   { return p.Miner }
func (p RAMProof) MinerID() []byte   { return p.Miner }
func (p PlotProof) MinerID() []byte  { return p.Miner }
func (p CPUProof) Dims() host.Shape  { return p.Shape }
func (p RAMProof) Dims() host.Shape  { return p.Shape }
func (p PlotProof) Dims() host.Shape { return p.Shape }
func (p CPUProof) BoundNs() float64  { return cpuwork.StepBoundNs * p.Scale() }
func (RAMProof) BoundNs() float64    { return memwalk.StepBoundNs }
func (PlotProof) BoundNs() float64   { return plot.StepBoundNs }
func (CPUProof) MaxSample() int      { return 0 }
func (RAMProof) MaxSample() int      { return 0 }
func (p CPUProof) MaxOpening(k int) int {
	return maxCheckpointOpening(k, p.Leaves(), cpuwork.StateBytes)
}
func (p RAMProof) MaxOpening(k int) int {
	return maxCheckpointOpening(k, p.Leaves(), memwalk.StateBytes)
}

// MaxOpening of a storage audit: the checkpoint opening's length, the
// blocks the sampled segments read (at most Segment each) with their
// indices, and their batch proof.
func (p PlotProof) MaxOpening(k int) int {
	k = min(k, p.MaxSample())
	blocks := k * int(p.Segment)
	return 4 + maxCheckpointOpening(k, p.Leaves(), plot.StateBytes) + 4 + blocks*(8+p.BlockBytes()) + 4 + 32*blocks*(bits.Len64(p.Blocks)+1)
}

// maxCheckpointOpening bounds the opening of samples segments of a tree
// of leaves checkpoints: a count, at most two states per segment, and a
// batch proof of at most one chaining value per sampled leaf per level.
func maxCheckpointOpening(samples int, leaves uint64, stateBytes int) int {
	depth := bits.Len64(leaves) + 1
	return 4 + 2*samples*stateBytes + 4 + 32*2*samples*depth
}

func (p CPUProof) Verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := host.DecodeOpening(b, cpuwork.StateBytes)
	if err != nil {
		return err
	}
	return cpuwork.Verify(p.Params, root, segs, op)
}

func (p RAMProof) Verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := host.DecodeOpening(b, memwalk.StateBytes)
	if err != nil {
		return err
	}
	c, err := RAMCache(p.Epoch)
	if err != nil {
		return err
	}
	return memwalk.Verify(p.Params, c, root, segs, op)
}

func (p PlotProof) Verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := plot.DecodeOpening(b, p.BlockLog)
	if err != nil {
		return err
	}
	if err := plot.Verify(p.Audit, root, segs, op); err != nil {
		return err
	}
	return plot.CheckRegenerated(p.Audit, segs, op, plotRegenerated)
}

// Credited CPU: the chains, and chain steps (each counting its scale) per
// second times the credit. A windowed round is credited over at least its
// window (SPEC §23.2): a root sent early earns the steps it ran over the
// whole window, so identities answered in turn by one server share the
// server's steps of one window.
func (p CPUProof) Credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: max(elapsed, p.Window())}
	return scoring.HostMeasurement{CPUChains: int(p.Chains), CPUStepsPerSecond: p.Scale() * t.StepsPerSecond() * t.Credit(p.BoundNs())}
}

// Windowed is a CPU proof run to a window, as a Proof.
func Windowed(pr Proof) (CPUProof, bool) {
	c, ok := pr.(CPUProof)
	return c, ok && c.WindowMs > 0
}

// Proven is a windowed CPU proof as the miner proved it, n steps a chain:
// what the samples, the check and the record are made over.
func (p CPUProof) Proven(n uint64) (CPUProof, error) {
	q, err := p.Params.Proven(n)
	return CPUProof{q}, err
}

// Credited RAM: the dataset's bytes and the walks' random reads per second
// (64 bytes each), both times the credit.
func (p RAMProof) Credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: elapsed}
	c := t.Credit(memwalk.StepBoundNs)
	return scoring.HostMeasurement{RAMBytes: 64 * float64(p.Items) * c, RAMBytesPerSecond: 64 * t.StepsPerSecond() * c,
		RAMHeldBytes: 64 * float64(p.Items)}
}

// Credited storage: the plot's bytes and the walks' block reads per
// second times the block size, both times the credit.
func (p PlotProof) Credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: elapsed}
	c := t.Credit(plot.StepBoundNs)
	return scoring.HostMeasurement{StorageBytes: float64(p.Bytes()) * c, StorageBytesPerSecond: float64(p.BlockBytes()) * t.StepsPerSecond() * c,
		StorageHeldBytes: float64(p.Bytes())}
}
