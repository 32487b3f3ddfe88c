package bench

import "syscall"

// memoryLimit lets a job use at most 90% of physical memory.
func memoryLimit() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit) / 10 * 9
}
