//go:build !amd64

package proof

// vectorKernels returns none: only amd64 has vector kernels so far.
func vectorKernels() []*kernel { return nil }
