package testnet

import (
	"time"

	"golang.org/x/sys/unix"
)

// wallNow reads the machine's monotonic clock, which a synctest bubble's
// fake clock does not replace: a simulated run's wall time.
func wallNow() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
