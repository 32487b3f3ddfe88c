//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// cuBLAS is loaded at run time so the binary starts whatever libcublas is
// installed, or none. Only these entry points are used; their ABI has been
// stable since cuBLAS 11 (cublasComputeType_t arguments).
typedef int (*pog_create_t)(void **);
typedef int (*pog_destroy_t)(void *);
typedef int (*pog_setstream_t)(void *, void *);
typedef int (*pog_version_t)(void *, int *);
typedef int (*pog_gemm_t)(void *, int, int, int, int, int, const void *, const void *, int, int,
	const void *, int, int, const void *, void *, int, int, int, int);

typedef struct {
	void *lib;
	pog_create_t create;
	pog_destroy_t destroy;
	pog_setstream_t setstream;
	pog_version_t version;
	pog_gemm_t gemm;
} pog_cublas;

static const char *pog_cublas_open(pog_cublas *b, const char *path) {
	b->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!b->lib) return dlerror();
	b->create = (pog_create_t)dlsym(b->lib, "cublasCreate_v2");
	b->destroy = (pog_destroy_t)dlsym(b->lib, "cublasDestroy_v2");
	b->setstream = (pog_setstream_t)dlsym(b->lib, "cublasSetStream_v2");
	b->version = (pog_version_t)dlsym(b->lib, "cublasGetVersion_v2");
	b->gemm = (pog_gemm_t)dlsym(b->lib, "cublasGemmEx");
	if (!b->create || !b->destroy || !b->setstream || !b->version || !b->gemm) {
		dlclose(b->lib);
		b->lib = NULL;
		return "missing cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2, cublasGetVersion_v2 or cublasGemmEx";
	}
	return NULL;
}

static int pog_cublas_create(pog_cublas *b, void **h) { return b->create(h); }
static int pog_cublas_destroy(pog_cublas *b, void *h) { return b->destroy(h); }
static int pog_cublas_setstream(pog_cublas *b, void *h, void *s) { return b->setstream(h, s); }
static int pog_cublas_version(pog_cublas *b, void *h, int *v) { return b->version(h, v); }

static int pog_cublas_gemm(pog_cublas *b, void *h, int transa, int transb, int m, int n, int k,
		unsigned long long A, int atype, int lda, unsigned long long B, int btype, int ldb,
		unsigned long long C, int ctype, int ldc, int compute) {
	float alpha = 1, beta = 0;
	return b->gemm(h, transa, transb, m, n, k, &alpha, (const void *)A, atype, lda, (const void *)B, btype, ldb,
		&beta, (void *)C, ctype, ldc, compute, -1);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"
)

// cuBLAS and CUDA enum values used here (cublas_api.h, library_types.h).
const (
	cublasOpN           = 0
	cublasOpT           = 1
	cudaR32F            = 0
	cudaR16F            = 2
	cublasCompute32F    = 68 // fp16 inputs: tensor cores, fp32 accumulation
	cublasCompute32FPed = 69 // fp32 inputs: no TF32 or other reduced-precision path
	minCublasVersion    = 11000
)

// cublasSonames are tried in order when no path is configured.
var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

type cublasLib struct {
	c    C.pog_cublas
	path string
}

// loadCublas opens path, or the first soname that loads.
func loadCublas(path string) (*cublasLib, error) {
	tries := cublasSonames
	if path != "" {
		tries = []string{path}
	}
	var errs []string
	for _, p := range tries {
		l := &cublasLib{path: p}
		cs := C.CString(p)
		msg := C.pog_cublas_open(&l.c, cs)
		C.free(unsafe.Pointer(cs))
		if msg == nil {
			return l, nil
		}
		errs = append(errs, C.GoString(msg))
	}
	return nil, fmt.Errorf("no usable cuBLAS: %s", strings.Join(errs, "; "))
}

// cublasHandle is a handle bound to one device's primary context and
// stream; it must be used on that device's thread.
type cublasHandle struct {
	lib     *cublasLib
	h       unsafe.Pointer
	version int
}

func (l *cublasLib) newHandle(stream cu.Stream) (*cublasHandle, error) {
	h := &cublasHandle{lib: l}
	if r := C.pog_cublas_create(&l.c, &h.h); r != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", int(r))
	}
	var v C.int
	if r := C.pog_cublas_version(&l.c, h.h, &v); r != 0 || v < minCublasVersion {
		C.pog_cublas_destroy(&l.c, h.h)
		return nil, fmt.Errorf("cuBLAS %s: version %d (status %d), need %d or newer", l.path, int(v), int(r), minCublasVersion)
	}
	h.version = int(v)
	if r := C.pog_cublas_setstream(&l.c, h.h, unsafe.Pointer(stream.C())); r != 0 {
		C.pog_cublas_destroy(&l.c, h.h)
		return nil, fmt.Errorf("cublasSetStream: status %d", int(r))
	}
	return h, nil
}

// gemmTN computes the row-major rows×n panel C = A_panel·Btᵀ from K-contiguous
// A (rows×kp) and Bt (n×kp): in cuBLAS's column-major terms Cᵀ = op(Bt)·A
// with op = transpose, the layout cuBLAS runs fastest.
func (h *cublasHandle) gemmTN(fp16 bool, rows, n, kp int, a, bt, c cu.DevicePtr) error {
	in, compute := cudaR32F, cublasCompute32FPed
	if fp16 {
		in, compute = cudaR16F, cublasCompute32F
	}
	r := C.pog_cublas_gemm(&h.lib.c, h.h, cublasOpT, cublasOpN, C.int(n), C.int(rows), C.int(kp),
		C.ulonglong(bt), C.int(in), C.int(kp), C.ulonglong(a), C.int(in), C.int(kp),
		C.ulonglong(c), cudaR32F, C.int(n), C.int(compute))
	if r != 0 {
		return fmt.Errorf("cublasGemmEx %d×%d×%d: status %d", rows, n, kp, int(r))
	}
	return nil
}

func (h *cublasHandle) close() { C.pog_cublas_destroy(&h.lib.c, h.h) }
