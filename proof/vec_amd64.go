package proof

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/vecgen -out vec_amd64.s

// The generated kernels, one family per instruction set; vecArgs describes
// their arguments and vec.go the data layout they share with Go.

//go:noescape
func blocks512IFMA(a *vecArgs)

//go:noescape
func bside512IFMA(a *vecArgs)

//go:noescape
func aside512IFMA(a *vecArgs)

//go:noescape
func aside512IFMAx2(a *vecArgs)

//go:noescape
func aside512IFMAx3(a *vecArgs)

//go:noescape
func aside512IFMAx4(a *vecArgs)

//go:noescape
func blocks512(a *vecArgs)

//go:noescape
func bside512(a *vecArgs)

//go:noescape
func aside512(a *vecArgs)

//go:noescape
func aside512x2(a *vecArgs)

//go:noescape
func aside512x3(a *vecArgs)

//go:noescape
func aside512x4(a *vecArgs)

//go:noescape
func blocks256(a *vecArgs)

//go:noescape
func bside256(a *vecArgs)

//go:noescape
func aside256(a *vecArgs)

// vectorKernels returns the kernels this CPU's instruction sets allow.
func vectorKernels() []*kernel {
	var vk []*kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA {
		vk = append(vk, (&vecKernel{w: 8, blocks: blocks512IFMA, bside: bside512IFMA, aside: []func(*vecArgs){aside512IFMA, aside512IFMAx2, aside512IFMAx3, aside512IFMAx4}}).kernel("avx512ifma"))
	}
	if cpu.X86.HasAVX512F {
		vk = append(vk, (&vecKernel{w: 8, blocks: blocks512, bside: bside512, aside: []func(*vecArgs){aside512, aside512x2, aside512x3, aside512x4}}).kernel("avx512"))
	}
	if cpu.X86.HasAVX2 {
		vk = append(vk, (&vecKernel{w: 4, blocks: blocks256, bside: bside256, aside: []func(*vecArgs){aside256}}).kernel("avx2"))
	}
	return vk
}
