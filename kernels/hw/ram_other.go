//go:build !linux

package hw

// totalRAM is not read off Linux.
func totalRAM() (uint64, error) { return 0, errNotSupported }
