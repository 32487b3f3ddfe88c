// pog.cu is the single translation unit `make ptx` compiles: every kernel the
// CUDA backend loads, from one PTX module per target architecture.
//
// Contract with the Go side (kernels/cuda):
//   - Every kernel is extern "C" and takes only 8-byte parameters (pointers,
//     unsigned long long), because gorgonia.org/cu copies 8 bytes per argument.
//   - Input matrices are padded: A_b is Mp×Kp and Bᵀ_b is Np×Kp, row-major,
//     with Mp = roundup(M, POG_PAD_MN), Np = roundup(N, POG_PAD_MN) and
//     Kp = roundup(K, POG_PAD_K). Padding holds zeros, so it changes no
//     product and the GEMMs need no bounds checks on loads.
//   - The output is int32, tile-major: tile (b, I, J) of t×t elements starts
//     at element ((b·(M/t) + I)·(N/t) + J)·t², row-major inside the tile. It is
//     exactly the serialisation proof.Params describes.
#include "common.cuh"
#include "gen.cu"
#include "gemm.cu"
#include "blake3.cu"
