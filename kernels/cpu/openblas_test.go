//go:build openblas

package cpu

import (
	"fmt"
	"testing"
	"time"

	"github.com/pog-network/pog/kernels/cpu/internal/openblas"
)

func TestOpenBLASBitIdentical(t *testing.T) {
	const n = 1024
	a, bt, want := benchOperands(n)
	openblas.SgemmNT(n, n, n, a, n, bt, n, want, n)
	for _, mk := range availableKernels() {
		t.Run(mk.name, func(t *testing.T) {
			withKernel(t, mk)
			got := make([]float32, n*n)
			SgemmNT(n, n, n, a, n, bt, n, got, n, 0)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("C[%d][%d] = %v, OpenBLAS gives %v", i/n, i%n, got[i], want[i])
				}
			}
		})
	}
}

func BenchmarkOpenBLAS(b *testing.B) {
	defaultThreads := openblas.Threads()
	b.Logf("OpenBLAS default threads: %d", defaultThreads)
	defer openblas.SetThreads(defaultThreads)
	for _, threads := range []int{defaultThreads, 1} {
		for _, n := range []int{1024, 2048} {
			name := fmt.Sprintf("n=%d", n)
			if threads == 1 {
				name = "threads=1/" + name
			}
			b.Run(name, func(b *testing.B) {
				openblas.SetThreads(threads)
				a, bt, c := benchOperands(n)
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					openblas.SgemmNT(n, n, n, a, n, bt, n, c, n)
				}
				reportGFLOPS(b, n, time.Since(start))
			})
		}
	}
}
