//go:build !unix

package bench

import "time"

// processCPU is unmeasured off Unix: core-seconds read 0, and miners per
// core 0 (unknown).
func processCPU() time.Duration { return 0 }
