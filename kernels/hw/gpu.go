package hw

import (
	"context"
	"sync"
)

// GPU is one NVIDIA GPU as NVML reports it. A field NVML could not read is
// zero (or empty) and the report has a note naming it.
type GPU struct {
	// Index is NVML's index, which orders GPUs by PCI bus ID. CUDA's
	// default order (fastest first) can differ: match GPUs by UUID.
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
	// MemoryBytes is the device memory NVML reports as total.
	MemoryBytes uint64 `json:"memory_bytes"`
	// ComputeMajor and ComputeMinor are the CUDA compute capability.
	ComputeMajor int `json:"compute_major"`
	ComputeMinor int `json:"compute_minor"`
	// PCIe link: current generation and width drop when the GPU idles, the
	// max values are what the link (GPU and slot) can do.
	PCIeGen      int `json:"pcie_gen"`
	PCIeGenMax   int `json:"pcie_gen_max"`
	PCIeWidth    int `json:"pcie_width"`
	PCIeWidthMax int `json:"pcie_width_max"`
	// Clocks in MHz, current and maximum.
	SMClockMHz     uint32 `json:"sm_clock_mhz"`
	SMClockMaxMHz  uint32 `json:"sm_clock_max_mhz"`
	MemClockMHz    uint32 `json:"mem_clock_mhz"`
	MemClockMaxMHz uint32 `json:"mem_clock_max_mhz"`
	// PowerLimitMW is the power management limit in milliwatts.
	PowerLimitMW uint32 `json:"power_limit_mw"`
	// Bandwidths in GB/s (10⁹ bytes/s) measured by a GPU backend's
	// GPUBandwidth: pinned host→device and device→host copies, and a
	// device-to-device copy. Zero when not measured (see the notes).
	H2DGBps    float64 `json:"h2d_gbps"`
	D2HGBps    float64 `json:"d2h_gbps"`
	DeviceGBps float64 `json:"device_gbps"`
}

// GPUInventory is what a GPU source reports: the GPUs, the system-wide
// driver and CUDA versions, and notes on whatever could not be read.
type GPUInventory struct {
	GPUs   []GPU
	Driver string
	CUDA   string
	Notes  []string
}

// GPUBandwidth measures bandwidths only a GPU backend can: a CUDA build
// registers one with RegisterGPUBandwidth. Measure should take about a
// second and must return when ctx ends; g.UUID identifies the device (NVML
// and CUDA number GPUs differently). Results are in GB/s (10⁹ bytes/s).
type GPUBandwidth interface {
	Measure(ctx context.Context, g GPU) (h2dGBps, d2hGBps, deviceGBps float64, err error)
}

var (
	bandwidthMu         sync.Mutex
	registeredBandwidth GPUBandwidth
)

// RegisterGPUBandwidth makes b the GPU bandwidth measurement Measure uses
// when Options.GPUBandwidth is nil; GPU backends call it from init.
func RegisterGPUBandwidth(b GPUBandwidth) {
	bandwidthMu.Lock()
	defer bandwidthMu.Unlock()
	registeredBandwidth = b
}

func registered() GPUBandwidth {
	bandwidthMu.Lock()
	defer bandwidthMu.Unlock()
	return registeredBandwidth
}
