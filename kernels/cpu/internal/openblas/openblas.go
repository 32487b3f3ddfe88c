//go:build openblas

// Package openblas binds the few OpenBLAS calls that the cpu package's
// benchmarks compare against. It lives apart from package cpu because a Go
// package cannot mix cgo with Go assembly. Build with -tags openblas.
package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

// SgemmNT computes C = A·Btᵀ with cblas_sgemm, using SgemmNT's layout:
// A is m×k row-major, Bt is n×k row-major, C is m×n row-major.
func SgemmNT(m, n, k int, a []float32, lda int, bt []float32, ldb int, c []float32, ldc int) {
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasTrans,
		C.blasint(m), C.blasint(n), C.blasint(k),
		1, (*C.float)(&a[0]), C.blasint(lda),
		(*C.float)(&bt[0]), C.blasint(ldb),
		0, (*C.float)(&c[0]), C.blasint(ldc))
}

// Threads reports how many threads OpenBLAS uses.
func Threads() int { return int(C.openblas_get_num_threads()) }

// SetThreads sets how many threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
