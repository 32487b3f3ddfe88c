// Package cuda is the GPU compute backend: kernels.Backend "cuda" generates
// the challenge matrices, multiplies them on tensor cores (fp16) or CUDA
// cores (fp32) and hashes the output tiles, all in device memory, so only the
// 32-byte tile chaining values and the sampled tiles cross PCIe.
//
// The kernels are CUDA C++ in src/, compiled by `make ptx` into one PTX
// module per target architecture (ptx/), embedded here and loaded through
// gorgonia.org/cu. That package needs cuda.h and libcuda to build and ends
// the process in init when the driver cannot start, so everything that
// touches it sits behind the cuda build tag: `go build ./...` never links it,
// `go build -tags cuda ./cmd/pog` makes the GPU miner. The layout and launch
// arithmetic, the embedded PTX and the kernels' per-thread code (through
// hostsim) are plain Go and C, tested in every build.
//
// cuBLAS, when a libcublas is found at run time, may do the GEMM; the
// package's own kernels are the fallback, so the binary never depends on a
// cuBLAS version being installed.
package cuda
