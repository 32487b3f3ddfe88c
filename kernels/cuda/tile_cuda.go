//go:build cuda

package cuda

import (
	"context"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof"
)

// ComputeTile implements kernels.TileComputer. A sampled tile costs
// 2·t²·K FLOPs, a few dozen of them per round, so the host recomputes them
// (cpu.Backend.ComputeTile) while the device keeps only its jobs' working
// buffers: a job is closed as soon as its tile chaining values are read.
func (b *Backend) ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error {
	return cpu.Backend{}.ComputeTile(ctx, p, i, dst)
}
