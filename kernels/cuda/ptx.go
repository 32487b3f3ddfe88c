package cuda

import (
	"embed"
	"fmt"
)

//go:embed ptx/*.ptx
var ptxFS embed.FS

// Kernels the backend loads from every PTX module.
var kernelNames = []string{"pog_generate", "pog_gemm_f16", "pog_gemm_f32", "pog_f32_to_tiles", "pog_chunk_cvs", "pog_parent_cvs"}

// ptxArchs are the compiled targets, newest first; `make ptx` writes
// ptx/pog_sm<NN>.ptx for each.
var ptxArchs = []int{90, 80}

// ptxFor returns the PTX for the newest target a device of compute
// capability major.minor runs; the driver JIT-compiles it for the device.
func ptxFor(major, minor int) (string, int, error) {
	cc := 10*major + minor
	for _, a := range ptxArchs {
		if a <= cc {
			b, err := ptxFS.ReadFile(fmt.Sprintf("ptx/pog_sm%d.ptx", a))
			return string(b), a, err
		}
	}
	return "", 0, fmt.Errorf("compute capability %d.%d: pog's CUDA kernels need %d.%d or newer (mma.sync m16n8k16, cp.async)",
		major, minor, ptxArchs[len(ptxArchs)-1]/10, ptxArchs[len(ptxArchs)-1]%10)
}
