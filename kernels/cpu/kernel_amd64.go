package cpu

import "golang.org/x/sys/cpu"

//go:generate go run gen_asm.go

//go:noescape
func sgemmKernelAVX512(k int, a, b, c *float32, ldc int, accumulate bool)

//go:noescape
func sgemmKernelAVX2(k int, a, b, c *float32, ldc int, accumulate bool)

// The AVX-512 tile is 14×32: 28 zmm accumulators, two B vectors and two
// broadcast registers use all 32 registers. The AVX2 tile is the classic
// 6×16 (12 accumulators in 16 ymm registers).
var (
	avx512Kernel = microKernel{name: "avx512", mr: 14, nr: 32, fn: sgemmKernelAVX512}
	avx2Kernel   = microKernel{name: "avx2", mr: 6, nr: 16, fn: sgemmKernelAVX2}
)

// availableKernels lists every kernel this CPU can run, fastest first.
func availableKernels() []microKernel {
	var ks []microKernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, genericKernel)
}
