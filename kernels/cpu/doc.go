// Package cpu is the CPU compute backend: kernels.Backend "cpu" generates
// the challenge matrices with the proof generator, multiplies them with
// SgemmNT and hashes the tile-major output, all on the host's cores.
//
// SgemmNT is a Goto/BLIS-style single-precision matrix multiply: both
// operands are packed into cache-resident panels and the inner product is
// computed by a register-blocked FMA micro-kernel written in assembly
// (AVX-512 or AVX2+FMA, chosen at start-up), with a pure-Go kernel for other
// CPUs and architectures.
package cpu
