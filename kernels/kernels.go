// Package kernels owns the compute backends a miner runs challenges on. The
// rest of pog sees only Backend and Job: generate the inputs, multiply, hash
// the output tiles, and copy out the few tiles a validator samples. Keeping
// the output where it was computed (device memory on a GPU) means only the
// 32-byte tile chaining values and the sampled tiles cross the bus.
//
// The CPU backend (kernels/cpu) is the default build. The CUDA backend sits
// behind the cuda build tag.
package kernels

import (
	"context"
	"fmt"
	"sort"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// Stage names a step of a job, for progress reports.
type Stage string

// Job stages, in order.
const (
	StageGenerate Stage = "generate"
	StageMultiply Stage = "multiply"
	StageHash     Stage = "hash"
)

// Options tune a job.
type Options struct {
	// Workers bounds parallelism where the backend uses host threads;
	// <= 0 means one per CPU.
	Workers int
	// Progress, if set, is called with the fraction done of a stage.
	Progress func(s Stage, done float64)
	// Device picks the device of a multi-device backend, modulo
	// Backend.Devices; sub-challenges on different devices run concurrently.
	Device int
	// MemoryLimit, if positive, is the most bytes a job may allocate; a
	// challenge that needs more fails at Start with a clear error.
	MemoryLimit uint64
}

// Backend starts jobs on one compute device.
type Backend interface {
	Name() string
	// Devices is the number of devices jobs can run on at once.
	Devices() int
	// MemoryNeeded reports the bytes a job for p allocates.
	MemoryNeeded(p proof.Params) uint64
	// Start allocates a job's buffers; it fails if p does not fit.
	Start(p proof.Params, opts Options) (Job, error)
}

// Job is one challenge's computation. Methods run in order: Generate,
// Multiply, TileCVs, then any number of Tile calls until Close.
type Job interface {
	// Generate fills A and B from the challenge key.
	Generate(ctx context.Context) error
	// Multiply computes C = A·B, serialised tile-major as int32.
	Multiply(ctx context.Context) error
	// TileCVs returns the BLAKE3 chaining value of every output tile.
	TileCVs(ctx context.Context) ([]commit.CV, error)
	// Tile copies tile i's serialised bytes into dst (len TileBytes).
	Tile(i uint64, dst []byte) error
	// Close frees the job's buffers.
	Close() error
}

// TileComputer recomputes one output tile from the challenge key alone,
// 2·t²·K FLOPs, without the rest of the output: a miner hashes each step's
// output and discards it, then recomputes only the tiles a validator
// samples (SPEC.md §16). Every backend implements it.
type TileComputer interface {
	ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error
}

// ComputeTile recomputes tile i of p with be, through its own
// TileComputer or, for a backend without one, a one-job fallback that
// holds the whole output while it runs.
func ComputeTile(ctx context.Context, be Backend, p proof.Params, i uint64, dst []byte) error {
	if tc, ok := be.(TileComputer); ok {
		return tc.ComputeTile(ctx, p, i, dst)
	}
	j, err := be.Start(p, Options{Workers: 1})
	if err != nil {
		return err
	}
	defer j.Close()
	if err := j.Generate(ctx); err != nil {
		return err
	}
	if err := j.Multiply(ctx); err != nil {
		return err
	}
	return j.Tile(i, dst)
}

// Compute runs a started job's stages in order and returns its tile
// chaining values.
func Compute(ctx context.Context, j Job) ([]commit.CV, error) {
	if err := j.Generate(ctx); err != nil {
		return nil, err
	}
	if err := j.Multiply(ctx); err != nil {
		return nil, err
	}
	return j.TileCVs(ctx)
}

var registry = map[string]func() (Backend, error){}

// Register makes a backend constructor available by name; backends call it
// from init.
func Register(name string, open func() (Backend, error)) {
	registry[name] = open
}

// Open returns the named backend.
func Open(name string) (Backend, error) {
	open, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (available: %v)", name, Names())
	}
	return open()
}

// Names lists registered backends.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckMemory returns a clear error when need exceeds a positive limit.
func CheckMemory(backend string, p proof.Params, need, limit uint64) error {
	if limit > 0 && need > limit {
		return fmt.Errorf("%s backend: challenge %d×%d×%d (batch %d) needs %.2f GiB, only %.2f GiB available",
			backend, p.M, p.K, p.N, p.Batch, float64(need)/(1<<30), float64(limit)/(1<<30))
	}
	return nil
}
