//go:build !(linux && cgo)

package hw

import "runtime"

// defaultInventory: go-nvml needs cgo and loads the library with Linux's
// dlopen, so other builds cannot reach NVML.
func defaultInventory() GPUInventory {
	why := "built without cgo"
	if runtime.GOOS != "linux" {
		why = "not supported on " + runtime.GOOS
	}
	return GPUInventory{GPUs: []GPU{}, Notes: []string{"NVML not available: " + why + "; reporting 0 GPUs"}}
}
