package scoring

import "math"

// CPUCyclesPerStep converts the CPU host proof's credited chain steps to
// the core·GHz the CPU part is normalised by (SPEC §23.7): one 16-lane
// step counts as 64 cycles, calibrated so that a core of the development
// machine counts at about its clock (SPEC §23.7 gives the figures;
// docs/design/0006-host-reference-units.md why it is not yet a reference
// CPU's).
const CPUCyclesPerStep = 64

// HostMeasurement is what a validator's host proofs (SPEC §23) credited a
// miner in one epoch, each figure already multiplied by its proof's credit.
// Proofs of several CPUs, datasets or plots combine with Add.
type HostMeasurement struct {
	CPUChains             int     // chains of the CPU proofs
	CPUStepsPerSecond     float64 // credited chain steps per second, all chains
	RAMBytes              float64 // credited dataset bytes
	RAMBytesPerSecond     float64 // credited random 64-byte reads × 64 per second
	StorageBytes          float64 // credited plot bytes
	StorageBytesPerSecond float64 // credited block reads × block size per second
	RAMHeldBytes          float64 // the datasets' bytes, before the credit
	StorageHeldBytes      float64 // the plots' bytes, before the credit
}

// Add sums two measurements: several CPUs, datasets or disks of one miner.
func (m HostMeasurement) Add(o HostMeasurement) HostMeasurement {
	return HostMeasurement{
		CPUChains:             m.CPUChains + o.CPUChains,
		CPUStepsPerSecond:     m.CPUStepsPerSecond + o.CPUStepsPerSecond,
		RAMBytes:              m.RAMBytes + o.RAMBytes,
		RAMBytesPerSecond:     m.RAMBytesPerSecond + o.RAMBytesPerSecond,
		StorageBytes:          m.StorageBytes + o.StorageBytes,
		StorageBytesPerSecond: m.StorageBytesPerSecond + o.StorageBytesPerSecond,
		RAMHeldBytes:          m.RAMHeldBytes + o.RAMHeldBytes,
		StorageHeldBytes:      m.StorageHeldBytes + o.StorageHeldBytes,
	}
}

// Scale is m with every amount times f, its chains kept: the mean of
// several measurements of one host is their sum scaled.
func (m HostMeasurement) Scale(f float64) HostMeasurement {
	return HostMeasurement{
		CPUChains:             m.CPUChains,
		CPUStepsPerSecond:     m.CPUStepsPerSecond * f,
		RAMBytes:              m.RAMBytes * f,
		RAMBytesPerSecond:     m.RAMBytesPerSecond * f,
		StorageBytes:          m.StorageBytes * f,
		StorageBytesPerSecond: m.StorageBytesPerSecond * f,
		RAMHeldBytes:          m.RAMHeldBytes * f,
		StorageHeldBytes:      m.StorageHeldBytes * f,
	}
}

// ProvenHost is the measurement in the units Input.ProvenHost carries:
// cores = chains, GHz = credited steps per second per chain ×
// CPUCyclesPerStep; bytes, GB/s and MB/s as measured. A figure that is not
// a finite non-negative number counts as 0.
func (m HostMeasurement) ProvenHost() Hardware {
	h := Hardware{
		RAMBytes:         bytesOf(m.RAMBytes),
		RAMGBps:          nonneg(m.RAMBytesPerSecond) / 1e9,
		StorageBytes:     bytesOf(m.StorageBytes),
		StorageMBps:      nonneg(m.StorageBytesPerSecond) / 1e6,
		RAMHeldBytes:     bytesOf(m.RAMHeldBytes),
		StorageHeldBytes: bytesOf(m.StorageHeldBytes),
	}
	if m.CPUChains > 0 {
		h.CPUCores = m.CPUChains
		h.CPUGHz = float64(nonneg(m.CPUStepsPerSecond)*CPUCyclesPerStep) / 1e9 / float64(m.CPUChains)
	}
	return h
}

func bytesOf(v float64) uint64 {
	v = nonneg(v)
	if v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(v)
}
