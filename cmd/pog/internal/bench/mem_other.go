//go:build !linux

package bench

// memoryLimit is unknown off Linux: jobs are not bounded.
func memoryLimit() uint64 { return 0 }
