//go:build linux && cgo

package hw

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// defaultInventory reads the machine's NVML library, libnvidia-ml.so.1,
// loaded at run time.
func defaultInventory() GPUInventory { return ReadNVML(nvml.New()) }

// ReadNVML lists the GPUs lib reports. Production passes nvml.New(); tests
// pass a go-nvml mock. A failing Init yields no GPUs and a note; a failing
// per-device call leaves that field zero and adds a note. lib is shut down
// after a successful Init.
func ReadNVML(lib nvml.Interface) (inv GPUInventory) {
	inv.GPUs = []GPU{}
	note := func(format string, args ...any) { inv.Notes = append(inv.Notes, fmt.Sprintf(format, args...)) }
	if ret := lib.Init(); ret != nvml.SUCCESS {
		note("NVML not available: %s; reporting 0 GPUs", describeInitError(ret))
		return inv
	}
	defer func() {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS {
			note("NVML shutdown: %s", ret.Error())
		}
	}()
	// Return.Error asks the loaded library for its message, so every
	// message is formatted before Shutdown unloads it.
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		inv.Driver = v
	} else {
		note("NVIDIA driver version: %s", ret.Error())
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		inv.CUDA = cudaVersion(v)
	} else {
		note("CUDA driver version: %s", ret.Error())
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		note("NVML device count: %s; reporting 0 GPUs", ret.Error())
		return inv
	}
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			note("GPU %d: skipped, NVML cannot open it: %s", i, ret.Error())
			continue
		}
		inv.GPUs = append(inv.GPUs, readDevice(i, dev, note))
	}
	return inv
}

func readDevice(i int, dev nvml.Device, note func(string, ...any)) GPU {
	g := GPU{Index: i}
	check := func(what string, ret nvml.Return) bool {
		if ret != nvml.SUCCESS {
			note("GPU %d %s: %s", i, what, ret.Error())
			return false
		}
		return true
	}
	var ret nvml.Return
	if g.Name, ret = dev.GetName(); !check("name", ret) {
		g.Name = ""
	}
	if g.UUID, ret = dev.GetUUID(); !check("UUID", ret) {
		g.UUID = ""
	}
	if mem, ret := dev.GetMemoryInfo(); check("memory", ret) {
		g.MemoryBytes = mem.Total
	}
	if major, minor, ret := dev.GetCudaComputeCapability(); check("compute capability", ret) {
		g.ComputeMajor, g.ComputeMinor = major, minor
	}
	if v, ret := dev.GetCurrPcieLinkGeneration(); check("PCIe generation", ret) {
		g.PCIeGen = v
	}
	if v, ret := dev.GetMaxPcieLinkGeneration(); check("max PCIe generation", ret) {
		g.PCIeGenMax = v
	}
	if v, ret := dev.GetCurrPcieLinkWidth(); check("PCIe link width", ret) {
		g.PCIeWidth = v
	}
	if v, ret := dev.GetMaxPcieLinkWidth(); check("max PCIe link width", ret) {
		g.PCIeWidthMax = v
	}
	if v, ret := dev.GetClockInfo(nvml.CLOCK_SM); check("SM clock", ret) {
		g.SMClockMHz = v
	}
	if v, ret := dev.GetMaxClockInfo(nvml.CLOCK_SM); check("max SM clock", ret) {
		g.SMClockMaxMHz = v
	}
	if v, ret := dev.GetClockInfo(nvml.CLOCK_MEM); check("memory clock", ret) {
		g.MemClockMHz = v
	}
	if v, ret := dev.GetMaxClockInfo(nvml.CLOCK_MEM); check("max memory clock", ret) {
		g.MemClockMaxMHz = v
	}
	if v, ret := dev.GetPowerManagementLimit(); check("power limit", ret) {
		g.PowerLimitMW = v
	}
	return g
}

// describeInitError says in words why NVML did not start.
func describeInitError(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "the NVIDIA kernel driver is not loaded"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission to open the NVIDIA devices"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "the NVML library and the kernel driver versions differ (reboot after a driver upgrade?)"
	}
	return ret.Error()
}
