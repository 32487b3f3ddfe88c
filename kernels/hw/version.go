package hw

import "fmt"

// cudaVersion formats NVML's CUDA driver version, 1000·major + 10·minor
// (12040 is CUDA 12.4).
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
