//go:build cuda

// Package preinit starts the CUDA driver before gorgonia.org/cu does, to say
// clearly why a cuda build cannot run here. gorgonia.org/cu calls cuInit in
// its init and exits with a bare driver error when it fails; Go initialises
// packages in import-path order where dependencies allow, so this package
// (github.com/…) runs first and explains the failure before exiting itself.
package preinit

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

// pog_cu_init calls cuInit(0) and cuDeviceGetCount through the driver
// library the binary already links (the dynamic loader refuses to start it
// without libcuda.so.1, before any of this runs). It returns 0 and the
// device count, -2 for missing symbols, or the driver's CUresult (> 0) with
// its name when the driver provides one.
static int pog_cu_init(int *count, const char **name) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) return -2;
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*cnt)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
	int (*ename)(int, const char **) = (int (*)(int, const char **))dlsym(h, "cuGetErrorName");
	if (!init || !cnt) return -2;
	int r = init(0);
	if (r == 0) r = cnt(count);
	if (r != 0 && ename) ename(r, name);
	return r;
}
*/
import "C"

import (
	"fmt"
	"os"
)

func init() {
	var count C.int
	var name *C.char
	r := C.pog_cu_init(&count, &name)
	var why string
	switch {
	case r == -2:
		why = "libcuda.so.1 lacks cuInit or cuDeviceGetCount"
	case r != 0 && name != nil:
		why = fmt.Sprintf("the CUDA driver failed to start: %s (%d)", C.GoString(name), int(r))
	case r != 0:
		why = fmt.Sprintf("the CUDA driver failed to start: CUresult %d", int(r))
	default:
		// A driver that starts but finds no usable GPU is the backend's to
		// report; a miner then falls back to the CPU. (With no GPU at all
		// cuInit itself fails with CUDA_ERROR_NO_DEVICE, above.)
		return
	}
	fmt.Fprintf(os.Stderr, "pog: this is the cuda build and no GPU is usable: %s.\n"+
		"pog: on machines without an NVIDIA GPU use the default build (make build), which mines on the CPU.\n", why)
	os.Exit(1)
}
