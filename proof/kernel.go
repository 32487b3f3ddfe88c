package proof

import (
	"fmt"
	"sync/atomic"

	"github.com/pog-network/pog/proof/philox"
)

// kernel is one implementation of the two hot loops of verification: the
// Philox stream behind Line, and Freivalds' check of one tile. Every kernel
// yields the same bits and the same verdicts; they differ only in speed.
type kernel struct {
	name string
	// blocks fills dst with the Philox output of len(dst)/4 consecutive
	// blocks, four words each, the first at counter ctr (word 0 counts up).
	blocks func(dst []uint32, ctr [4]uint32, key [2]uint32)
	// badRows sets bad[j] to the first row of tile fs[j] whose Freivalds
	// check fails, or -1 when every row passes. The tiles share their batch
	// and tile row, hence their rows of A.
	badRows func(fs []*freivalds, bad []int)
}

// kernels lists the kernels this CPU can run, fastest first: the platform's
// vector kernels, then generic, which is always present.
var kernels = append(vectorKernels(), &kernel{name: "generic", blocks: blocksGeneric, badRows: badRowsGeneric})

// active is the kernel in use, the fastest unless SetVerifyKernel chose
// another.
var active atomic.Pointer[kernel]

func init() { active.Store(kernels[0]) }

func activeKernel() *kernel { return active.Load() }

// VerifyKernels names the verification kernels this CPU can run, in order of
// preference; the first is the default. "generic" (pure Go) is always last.
func VerifyKernels() []string {
	names := make([]string, len(kernels))
	for i, k := range kernels {
		names[i] = k.name
	}
	return names
}

// SetVerifyKernel makes the named kernel (one of VerifyKernels) generate
// lines and check tiles process-wide, and returns a function restoring the
// previous one. It exists for benchmarks and tests, which compare kernels in
// one process; since every kernel reaches the same verdicts, nothing else
// needs it. It must not race with itself.
func SetVerifyKernel(name string) (restore func(), err error) {
	for _, k := range kernels {
		if k.name == name {
			prev := active.Swap(k)
			return func() { active.Store(prev) }, nil
		}
	}
	return nil, fmt.Errorf("verify kernel %q: this CPU has %v", name, VerifyKernels())
}

// blocksGeneric is the scalar Philox stream.
func blocksGeneric(dst []uint32, ctr [4]uint32, key [2]uint32) {
	for i := 0; i+4 <= len(dst); i += 4 {
		w := philox.Block(ctr, key)
		copy(dst[i:i+4], w[:])
		ctr[0]++
	}
}
