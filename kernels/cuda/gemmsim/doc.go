// Package gemmsim replays the GEMM kernels of kernels/cuda/src/gemm.cu on the
// host, thread by thread, so their index arithmetic is checked without a GPU.
//
// sim.c includes gemm.cu (whose CUDA part compiles out under gcc) and calls
// the same index helpers as the kernels: cp.async and float4 load mappings,
// the swizzled shared-memory layout, ldmatrix lane addresses, warp tiles, mma
// accumulator positions and the tile-major output index. The hardware
// instructions (ldmatrix.x4, mma.sync m16n8k16) are emulated from the PTX ISA
// fragment tables, written independently of gemm.cu. The tests compare the
// replays with a naive matmul and check for faults the replay can see:
// out-of-bounds or misaligned accesses, shared-memory tiles not written
// exactly once, reads of unwritten shared memory, ldmatrix bank conflicts and
// vector stores that would cross a tile.
//
// The package needs cgo; without it only this file builds.
package gemmsim
