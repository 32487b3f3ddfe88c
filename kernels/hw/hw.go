// Package hw owns what a node knows about its own hardware: an inventory of
// its GPUs read through NVML, its CPU, memory and storage, and a few short
// measurements (host memory copy bandwidth, sequential storage throughput
// and, when a GPU backend provides them, PCIe and device memory bandwidth).
//
// Measure collects a Report; Cached keeps one as JSON in a node's home so
// that a node measures once a day, not at every start. Nothing here fails
// for want of hardware: a machine without an NVIDIA driver reports zero GPUs
// and says why in the report's notes, and any field that could not be read
// is left zero with a note naming it. Numbers that were not measured are
// never estimated.
//
// NVML is reached through github.com/NVIDIA/go-nvml, which loads
// libnvidia-ml.so.1 at run time: builds need cgo but no driver. Builds
// without cgo, and platforms other than Linux, report zero GPUs with a note.
package hw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Report is everything a node knows about its hardware. Its JSON field
// names are stable; zero values mean "not known" and Notes says why.
type Report struct {
	// Measured is when the report was taken.
	Measured time.Time `json:"measured"`
	// GPUs are the NVIDIA GPUs NVML lists, in NVML index order.
	GPUs []GPU `json:"gpus"`
	// Driver is the NVIDIA driver version, e.g. "550.54.15".
	Driver string `json:"driver"`
	// CUDA is the highest CUDA version the driver supports, e.g. "12.4".
	CUDA string `json:"cuda"`
	// Notes say what could not be read or measured, and why.
	Notes   []string `json:"notes"`
	CPU     CPU      `json:"cpu"`
	RAM     RAM      `json:"ram"`
	Storage Storage  `json:"storage"`
}

// Stage names a step of Measure, for progress reports.
type Stage string

// Measure's stages, in order.
const (
	StageGPUs         Stage = "gpus"
	StageGPUBandwidth Stage = "gpu-bandwidth"
	StageCPU          Stage = "cpu"
	StageRAM          Stage = "ram"
	StageStorage      Stage = "storage"
)

// Defaults of Options' zero fields.
const (
	DefaultRAMBytes        = 256 << 20
	DefaultRAMDuration     = 500 * time.Millisecond
	DefaultStorageBytes    = 256 << 20
	DefaultStorageDuration = 3 * time.Second
	// DefaultGPUBandwidthTimeout bounds one GPU's bandwidth measurement.
	DefaultGPUBandwidthTimeout = 10 * time.Second
)

// Options tune Measure. The zero value measures this machine with the
// defaults above.
type Options struct {
	// Dir is the directory whose filesystem is measured; "" means the
	// current directory. It must exist unless SkipStorage is set.
	Dir string
	// RAMBytes is the size of the buffer the memory benchmark copies; it
	// allocates twice this (source and destination), at most an eighth of
	// physical memory. 0 means DefaultRAMBytes.
	RAMBytes int64
	// RAMDuration is how long the memory benchmark copies (at least one
	// timed pass is made). 0 means DefaultRAMDuration.
	RAMDuration time.Duration
	// StorageBytes is the size of the temporary file the storage benchmark
	// writes and reads back, at most a tenth of the free space. 0 means
	// DefaultStorageBytes.
	StorageBytes int64
	// StorageDuration bounds each of the write and read phases: a slow
	// device stops early and is timed on what it did. 0 means
	// DefaultStorageDuration.
	StorageDuration time.Duration
	// SkipStorage leaves Storage zero, with a note.
	SkipStorage bool
	// Inventory lists the GPUs; nil reads NVML (see ReadNVML).
	Inventory func() GPUInventory
	// GPUBandwidth measures each GPU's bandwidths; nil uses the one a GPU
	// backend registered with RegisterGPUBandwidth, if any.
	GPUBandwidth GPUBandwidth
	// Progress, if set, is called as each stage starts.
	Progress func(Stage)
}

func (o Options) withDefaults() Options {
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.RAMBytes <= 0 {
		o.RAMBytes = DefaultRAMBytes
	}
	if o.RAMDuration <= 0 {
		o.RAMDuration = DefaultRAMDuration
	}
	if o.StorageBytes <= 0 {
		o.StorageBytes = DefaultStorageBytes
	}
	if o.StorageDuration <= 0 {
		o.StorageDuration = DefaultStorageDuration
	}
	if o.Inventory == nil {
		o.Inventory = defaultInventory
	}
	if o.GPUBandwidth == nil {
		o.GPUBandwidth = registered()
	}
	return o
}

// storageDir returns the absolute form of dir, or an error when it is not
// an existing directory.
func storageDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("hw: storage directory %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("hw: storage directory: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("hw: storage directory %s is not a directory", abs)
	}
	return abs, nil
}

// Measure inventories and measures this machine: GPUs, CPU, RAM, then
// storage, each bounded to a few seconds. What cannot be read becomes a
// note, not an error; Measure fails only when ctx ends or opts.Dir is not
// a directory.
func Measure(ctx context.Context, opts Options) (*Report, error) {
	o := opts.withDefaults()
	var dir string
	if !o.SkipStorage {
		var err error
		if dir, err = storageDir(o.Dir); err != nil {
			return nil, err
		}
	}
	progress := func(s Stage) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	r := &Report{Measured: time.Now().UTC().Truncate(time.Millisecond), GPUs: []GPU{}, Notes: []string{}}
	note := func(format string, args ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, args...)) }

	progress(StageGPUs)
	inv := o.Inventory()
	r.GPUs, r.Driver, r.CUDA = inv.GPUs, inv.Driver, inv.CUDA
	if r.GPUs == nil {
		r.GPUs = []GPU{}
	}
	r.Notes = append(r.Notes, inv.Notes...)
	if len(r.GPUs) > 0 {
		if o.GPUBandwidth == nil {
			note("GPU bandwidth (host↔device, device memory): not measured (CPU build)")
		} else {
			progress(StageGPUBandwidth)
			for i := range r.GPUs {
				if err := measureGPUBandwidth(ctx, o.GPUBandwidth, &r.GPUs[i]); err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					note("GPU %d bandwidth: not measured: %v", r.GPUs[i].Index, err)
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	progress(StageCPU)
	var cpuNotes []string
	r.CPU, cpuNotes = readCPU()
	r.Notes = append(r.Notes, cpuNotes...)

	progress(StageRAM)
	var err error
	if r.RAM.TotalBytes, err = totalRAM(); err != nil {
		note("RAM capacity: %v", err)
	}
	if err := measureRAM(ctx, &r.RAM, o.RAMBytes, o.RAMDuration); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		note("RAM bandwidth: not measured: %v", err)
	}

	if o.SkipStorage {
		note("storage: not measured (skipped)")
		return r, nil
	}
	progress(StageStorage)
	notes, err := measureStorage(ctx, &r.Storage, dir, o.StorageBytes, o.StorageDuration)
	r.Notes = append(r.Notes, notes...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		note("storage throughput: not measured: %v", err)
	}
	return r, nil
}

func measureGPUBandwidth(ctx context.Context, b GPUBandwidth, g *GPU) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultGPUBandwidthTimeout)
	defer cancel()
	h2d, d2h, dev, err := b.Measure(ctx, *g)
	if err != nil {
		return err
	}
	for _, v := range []float64{h2d, d2h, dev} {
		if !(v >= 0) || v > 1e6 {
			return fmt.Errorf("implausible result %g, %g, %g GB/s", h2d, d2h, dev)
		}
	}
	g.H2DGBps, g.D2HGBps, g.DeviceGBps = h2d, d2h, dev
	return nil
}

// errNotSupported reports a measurement this platform cannot make.
var errNotSupported = errors.New("not supported on this platform")

// rate returns units per second, never dividing by zero.
func rate(bytes int64, d time.Duration, unit float64) float64 {
	if d <= 0 {
		d = time.Nanosecond
	}
	return float64(bytes) / d.Seconds() / unit
}
