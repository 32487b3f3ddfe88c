// Package machine holds the testnet's simulated machines: the miners'
// hardware profiles, the GPUs they announce through the NVML mock, and
// their hosts scaled down to fit a run (a small RAM dataset and plot, the
// scoring reference divided to match); and the validators' CPU, which
// charges their checks the time virtual time would not.
package machine

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/pog-network/pog/kernels/hw"
	"github.com/pog-network/pog/protocol/pb"
)

// Profile is a simulated miner machine: one GPU of a class from BRIEF §7's
// table (fp16 TFLOPS as the subnet measures them) and a host to match.
type Profile struct {
	Name       string
	GPU        string  // NVML device name; empty for a CPU-only miner
	FP16TFLOPS float64 // the class's figure; CPU-only: a large server CPU
	MemoryMB   uint64
	Host       *pb.Hardware // read-only, shared
}

// Profiles, fastest GPU first: honest miners must end up ranked in this
// order, and of two with the same GPU the one with the bigger host first.
var Profiles = []Profile{
	{"H200", "NVIDIA H200", 610, 141 << 10, &pb.Hardware{CpuCores: 96, CpuGhz: 2.4, RamBytes: 2 << 40, RamGbps: 300, StorageBytes: 30e12, StorageMbps: 7000}},
	{"H100", "NVIDIA H100 80GB HBM3", 570, 80 << 10, &pb.Hardware{CpuCores: 96, CpuGhz: 2.2, RamBytes: 2 << 40, RamGbps: 250, StorageBytes: 20e12, StorageMbps: 6500}},
	{"A100", "NVIDIA A100-SXM4-80GB", 238.8, 80 << 10, &pb.Hardware{CpuCores: 64, CpuGhz: 2.2, RamBytes: 1 << 40, RamGbps: 200, StorageBytes: 15e12, StorageMbps: 5000}},
	{"RTX4090", "NVIDIA GeForce RTX 4090", 157, 24 << 10, &pb.Hardware{CpuCores: 16, CpuGhz: 4.5, RamBytes: 128 << 30, RamGbps: 80, StorageBytes: 4e12, StorageMbps: 5000}},
	{"CPU", "", 8, 0, &pb.Hardware{CpuCores: 16, CpuGhz: 3.0, RamBytes: 64 << 30, RamGbps: 50, StorageBytes: 2e12, StorageMbps: 2000}},
	// An H200 on a small host: ranked below the H200 by its host alone.
	{"H200-small-host", "NVIDIA H200", 610, 141 << 10, &pb.Hardware{CpuCores: 16, CpuGhz: 3.0, RamBytes: 64 << 30, RamGbps: 50, StorageBytes: 1e12, StorageMbps: 2000}},
}

// ByName is the named profile, CPU if there is none.
func ByName(name string) Profile {
	for _, p := range Profiles {
		if p.Name == name {
			return p
		}
	}
	return ByName("CPU")
}

// AnnouncedGPUs reads the profile's GPU through the go-nvml mock, the same
// path (hw.ReadNVML) a real miner takes through the driver.
func AnnouncedGPUs(gpu string, memoryMB uint64) []*pb.GPU {
	if gpu == "" {
		return nil
	}
	srv := server.NewServerWithGPUs("550.54.15", "12.550.54.15", 12040, gpus.Config{Name: gpu, MemoryMB: memoryMB, CudaMajor: 9})
	for _, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return 5, nvml.SUCCESS }
		dev.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 5, nvml.SUCCESS }
		dev.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
		dev.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
		dev.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
		dev.GetMaxClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
		dev.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
	}
	var out []*pb.GPU
	for _, g := range hw.ReadNVML(srv).GPUs {
		out = append(out, &pb.GPU{Name: g.Name, Uuid: g.UUID, MemoryBytes: g.MemoryBytes})
	}
	return out
}

// ScaledHost is h with its core count and every RAM and storage figure
// multiplied by f (the host-overclaim adversary's announce).
func ScaledHost(h *pb.Hardware, f float64) *pb.Hardware {
	return &pb.Hardware{CpuCores: uint32(float64(h.CpuCores) * f), CpuGhz: h.CpuGhz,
		RamBytes: uint64(float64(h.RamBytes) * f), RamGbps: h.RamGbps * f,
		StorageBytes: uint64(float64(h.StorageBytes) * f), StorageMbps: h.StorageMbps * f}
}
