// Package hostsim holds host builds of the CUDA kernels' per-thread code, for
// tests.
//
// Every per-thread computation of the kernels in ../src (Philox, the
// generator's group of eight values, BLAKE3 chunk and parent chaining values)
// is a POG_HD function of common.cuh, compiled here by the C compiler as
// C99. The emulations below loop those functions sequentially with the
// kernels' own indexing, so a test that compares them with the Go reference
// (proof.Line, philox.Block, commit.TileCVs) checks the kernels' arithmetic
// and layout without a GPU. What it cannot check: device intrinsics
// (__umulhi, __funnelshift_r, __byte_perm, __int2half_rn, vector loads),
// which sit behind #ifdef __CUDA_ARCH__ with host equivalents.
//
// common_cuh.h is a symbolic link to ../src/common.cuh, which the C code
// includes through -I../src. The link is there for the go command: it hashes
// only files in the package directory, so without it an edit to common.cuh
// would leave a stale cached build (TestHeaderLink keeps the link honest).
package hostsim

// #cgo CFLAGS: -I${SRCDIR}/../src -O2 -std=c99
// #include "hostsim.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"
)

// B3Threads is POG_B3_THREADS: threads per block of pog_chunk_cvs, the
// largest chunk group it merges in shared memory.
var B3Threads = int(C.hs_b3_threads())

// Philox is the device Philox4x32-10 block at counter ctr under key.
func Philox(ctr [4]uint32, key [2]uint32) [4]uint32 {
	var out [4]uint32
	C.hs_philox((*C.uint32_t)(&ctr[0]), (*C.uint32_t)(&key[0]), (*C.uint32_t)(&out[0]))
	return out
}

// PackVals packs a value set as pog_generate's vals argument.
func PackVals(mask, off, scale uint32) uint64 {
	return uint64(C.hs_pack_vals(C.uint32_t(mask), C.uint32_t(off), C.uint32_t(scale)))
}

// HalfBits is the binary16 encoding of v the emulation stores, exact for
// |v| <= 2048 (the device uses __int2half_rn).
func HalfBits(v int32) uint16 { return uint16(C.hs_half_bits(C.int32_t(v))) }

// GenArgs are pog_generate's arguments other than dst.
type GenArgs struct {
	Lines         uint64 // padded rows in all: batch·roundup(LinesPerBatch, 128)
	LinesPerBatch uint64 // M for A, N for Bᵀ
	K, Kp         uint64 // line length, and its padded length (a multiple of 8)
	Key           uint64 // key0 | key1<<32
	SaltMat       uint64 // salt | matrix<<32
	Vals          uint64 // PackVals
	FP16          bool
}

// GenGroup is pog_gen_group: elements 8g..8g+7 of padded row r.
func GenGroup(a GenArgs, r, g uint64) [8]int32 {
	var v [8]int32
	C.hs_gen_group((*C.int32_t)(&v[0]), C.uint64_t(r), C.uint64_t(g), C.uint64_t(a.LinesPerBatch), C.uint64_t(a.K),
		C.uint64_t(a.Key), C.uint64_t(a.SaltMat), C.uint64_t(a.Vals))
	return v
}

// Generate emulates pog_generate and returns dst: Lines×Kp elements,
// row-major, little-endian binary16 if a.FP16 and float32 otherwise.
func Generate(a GenArgs) []byte {
	if a.Kp%8 != 0 || a.Kp < a.K {
		panic(fmt.Sprintf("hostsim: padded length %d must be a multiple of 8 and >= K=%d", a.Kp, a.K))
	}
	size := uint64(4)
	fp16 := C.uint64_t(0)
	if a.FP16 {
		size, fp16 = 2, 1
	}
	dst := make([]byte, a.Lines*a.Kp*size)
	if len(dst) == 0 {
		return dst
	}
	C.hs_generate(unsafe.Pointer(&dst[0]), C.uint64_t(a.Lines), C.uint64_t(a.LinesPerBatch), C.uint64_t(a.K),
		C.uint64_t(a.Kp), C.uint64_t(a.Key), C.uint64_t(a.SaltMat), C.uint64_t(a.Vals), fp16)
	return dst
}

// ChunkCV is the non-root chaining value of one full 1024-byte chunk with
// the given chunk counter.
func ChunkCV(chunk []byte, counter uint64) [8]uint32 {
	if len(chunk) != 1024 {
		panic("hostsim: chunk must be 1024 bytes")
	}
	var cv [8]uint32
	C.hs_chunk_cv((*C.uint32_t)(&cv[0]), (*C.uchar)(&chunk[0]), C.uint64_t(counter))
	return cv
}

// ParentCV is the non-root chaining value of the parent of l and r.
func ParentCV(l, r [8]uint32) [8]uint32 {
	var cv [8]uint32
	C.hs_parent_cv((*C.uint32_t)(&cv[0]), (*C.uint32_t)(&l[0]), (*C.uint32_t)(&r[0]))
	return cv
}

// ChunkCVs emulates pog_chunk_cvs over data (a whole number of chunks, a
// multiple of 2^groupLog2 of them): one CV per aligned group of 2^groupLog2
// chunks, chunk c with counter chunkBase + c.
func ChunkCVs(data []byte, chunkBase uint64, groupLog2 int) [][8]uint32 {
	n := uint64(len(data) / 1024)
	if len(data)%1024 != 0 || groupLog2 < 0 || 1<<groupLog2 > B3Threads || n%(1<<groupLog2) != 0 {
		panic(fmt.Sprintf("hostsim: ChunkCVs of %d bytes in groups of 2^%d chunks", len(data), groupLog2))
	}
	out := make([][8]uint32, n>>groupLog2)
	if n == 0 {
		return out
	}
	C.hs_chunk_cvs((*C.uchar)(&data[0]), (*C.uint32_t)(&out[0][0]), C.uint64_t(n), C.uint64_t(chunkBase),
		C.uint64_t(groupLog2))
	return out
}

// ParentCVs emulates pog_parent_cvs: out[i] = parent(in[2i], in[2i+1]).
func ParentCVs(in [][8]uint32) [][8]uint32 {
	out := make([][8]uint32, len(in)/2)
	if len(out) == 0 {
		return out
	}
	C.hs_parent_cvs((*C.uint32_t)(&in[0][0]), (*C.uint32_t)(&out[0][0]), C.uint64_t(len(out)))
	return out
}

// TileCVs computes tile chaining values of a tile-major buffer as the CUDA
// backend does: pog_chunk_cvs with groupLog2 (DefaultGroupLog2 in
// production), then pog_parent_cvs until one CV per tile remains. The CVs
// are serialised as commit.CV (little-endian words).
func TileCVs(data []byte, tileBytes, groupLog2 int) [][32]byte {
	level := bits.Len(uint(tileBytes/1024)) - 1
	if tileBytes < 1024 || tileBytes&(tileBytes-1) != 0 || len(data)%tileBytes != 0 || groupLog2 > level {
		panic(fmt.Sprintf("hostsim: TileCVs of %d bytes, tiles of %d, group 2^%d", len(data), tileBytes, groupLog2))
	}
	cvs := ChunkCVs(data, 0, groupLog2)
	for l := groupLog2; l < level; l++ {
		cvs = ParentCVs(cvs)
	}
	out := make([][32]byte, len(cvs))
	for i, cv := range cvs {
		for w, v := range cv {
			binary.LittleEndian.PutUint32(out[i][4*w:], v)
		}
	}
	return out
}

// DefaultGroupLog2 is the group the Go backend passes to pog_chunk_cvs for
// tiles of tileBytes: min(log2(tileBytes/1024), log2(POG_B3_THREADS)).
func DefaultGroupLog2(tileBytes int) int {
	return min(bits.Len(uint(tileBytes/1024))-1, bits.Len(uint(B3Threads))-1)
}
