package node

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

// The three host proofs (SPEC §23) as the node plays them: what the wire
// carries, what the validator checks and what a verified round credits.
// The miner's side is in hostround.go.

// Host round kinds, the first byte of a host challenge.
const (
	hostKindCPU  = 1
	hostKindRAM  = 2
	hostKindPlot = 3
)

// plotRegenerated is how many sampled segments' first blocks a validator
// regenerates per storage audit (plot.CheckRegenerated): 2 × 4.7 ms at the
// default plot, and what binds the plot to the miner's identity.
const plotRegenerated = 2

// hostProof is one host challenge's parameters.
type hostProof interface {
	Validate() error
	kind() byte
	name() string // in logs: cpu, ram, storage
	tag() string  // in checkpoint leaves
	miner() []byte
	shape() host.Shape
	encode() []byte // the canonical encoding, sampled over
	boundNs() float64
	// maxSample caps the sample (0: host.MaxSegments).
	maxSample() int
	// maxOpening bounds the opening of samples segments.
	maxOpening(samples int) int
	// verify checks an opening of the sampled segments against root.
	verify(root commit.CV, segs []uint64, opening []byte) error
	// credited is what a verified round of this elapsed time credits.
	credited(elapsed time.Duration) scoring.HostMeasurement
}

type (
	cpuProof  struct{ *cpuwork.Params }
	ramProof  struct{ *memwalk.Params }
	plotProof struct{ *plot.Audit }
)

func decodeHostProof(kind byte, b []byte) (hostProof, error) {
	switch kind {
	case hostKindCPU:
		p, err := cpuwork.DecodeParams(b)
		return cpuProof{p}, err
	case hostKindRAM:
		p, err := memwalk.DecodeParams(b)
		return ramProof{p}, err
	case hostKindPlot:
		a, err := plot.DecodeAudit(b)
		return plotProof{a}, err
	}
	return nil, fmt.Errorf("host challenge of unknown kind %d", kind)
}

func (cpuProof) kind() byte   { return hostKindCPU }
func (ramProof) kind() byte   { return hostKindRAM }
func (plotProof) kind() byte  { return hostKindPlot }
func (cpuProof) name() string { return "cpu" }
func (ramProof) name() string { return "ram" }
func (plotProof) name() string {
	return "storage"
}
func (cpuProof) tag() string          { return cpuwork.Tag }
func (ramProof) tag() string          { return memwalk.Tag }
func (plotProof) tag() string         { return plot.Tag }
func (p cpuProof) miner() []byte      { return p.Miner }
func (p ramProof) miner() []byte      { return p.Miner }
func (p plotProof) miner() []byte     { return p.Miner }
func (p cpuProof) shape() host.Shape  { return p.Shape }
func (p ramProof) shape() host.Shape  { return p.Shape }
func (p plotProof) shape() host.Shape { return p.Shape }
func (p cpuProof) encode() []byte     { return p.Encode() }
func (p ramProof) encode() []byte     { return p.Encode() }
func (p plotProof) encode() []byte    { return p.Encode() }
func (cpuProof) boundNs() float64     { return cpuwork.StepBoundNs }
func (ramProof) boundNs() float64     { return memwalk.StepBoundNs }
func (plotProof) boundNs() float64    { return plot.StepBoundNs }
func (cpuProof) maxSample() int       { return 0 }
func (ramProof) maxSample() int       { return 0 }
func (p plotProof) maxSample() int    { return p.MaxSample() }
func (p cpuProof) maxOpening(k int) int {
	return maxCheckpointOpening(k, p.Leaves(), cpuwork.StateBytes)
}
func (p ramProof) maxOpening(k int) int {
	return maxCheckpointOpening(k, p.Leaves(), memwalk.StateBytes)
}

// maxOpening of a storage audit: the checkpoint opening's length, the
// blocks the sampled segments read (at most Segment each) with their
// indices, and their batch proof.
func (p plotProof) maxOpening(k int) int {
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

func (p cpuProof) verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := host.DecodeOpening(b, cpuwork.StateBytes)
	if err != nil {
		return err
	}
	return cpuwork.Verify(p.Params, root, segs, op)
}

func (p ramProof) verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := host.DecodeOpening(b, memwalk.StateBytes)
	if err != nil {
		return err
	}
	c, err := ramCaches.get(p.Epoch)
	if err != nil {
		return err
	}
	return memwalk.Verify(p.Params, c, root, segs, op)
}

func (p plotProof) verify(root commit.CV, segs []uint64, b []byte) error {
	op, err := plot.DecodeOpening(b, p.BlockLog)
	if err != nil {
		return err
	}
	if err := plot.Verify(p.Audit, root, segs, op); err != nil {
		return err
	}
	return plot.CheckRegenerated(p.Audit, segs, op, plotRegenerated)
}

// credited CPU: the chains, and chain steps per second times the credit.
func (p cpuProof) credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: elapsed}
	return scoring.HostMeasurement{CPUChains: int(p.Chains), CPUStepsPerSecond: t.StepsPerSecond() * t.Credit(cpuwork.StepBoundNs)}
}

// credited RAM: the dataset's bytes and the walks' random reads per second
// (64 bytes each), both times the credit.
func (p ramProof) credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: elapsed}
	c := t.Credit(memwalk.StepBoundNs)
	return scoring.HostMeasurement{RAMBytes: 64 * float64(p.Items) * c, RAMBytesPerSecond: 64 * t.StepsPerSecond() * c,
		RAMHeldBytes: 64 * float64(p.Items)}
}

// credited storage: the plot's bytes and the walks' block reads per
// second times the block size, both times the credit.
func (p plotProof) credited(elapsed time.Duration) scoring.HostMeasurement {
	t := host.Timing{Shape: p.Shape, Elapsed: elapsed}
	c := t.Credit(plot.StepBoundNs)
	return scoring.HostMeasurement{StorageBytes: float64(p.Bytes()) * c, StorageBytesPerSecond: float64(p.BlockBytes()) * t.StepsPerSecond() * c,
		StorageHeldBytes: float64(p.Bytes())}
}
