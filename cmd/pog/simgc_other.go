//go:build !linux

package main

// simGC leaves the collector as GOGC sets it where the machine's memory is
// not read (simgc_linux.go).
func simGC() {}
