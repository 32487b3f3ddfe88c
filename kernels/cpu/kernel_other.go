//go:build !amd64

package cpu

// availableKernels lists every kernel this CPU can run, fastest first.
func availableKernels() []microKernel {
	return []microKernel{genericKernel}
}
