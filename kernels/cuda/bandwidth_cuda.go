//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#cgo linux CFLAGS: -I/usr/local/cuda/include
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs
#include <cuda.h>

static int pog_host_alloc(void **p, size_t n) { return cuMemAllocHost(p, n); }
static int pog_host_free(void *p) { return cuMemFreeHost(p); }
*/
import "C"

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/pog-network/pog/kernels/hw"
)

func init() { hw.RegisterGPUBandwidth(bandwidth{}) }

// bandwidth implements hw.GPUBandwidth with pinned-memory copies timed by
// CUDA events.
type bandwidth struct{}

// bandwidthBytes is one copy's size: large enough to reach the link's
// steady rate.
const bandwidthBytes = 256 << 20

func (bandwidth) Measure(ctx context.Context, g hw.GPU) (h2d, d2h, dev float64, err error) {
	b, err := Open(Config{GEMM: "own"})
	if err != nil {
		return 0, 0, 0, err
	}
	defer b.Close()
	for _, d := range b.devs {
		if d.info.UUID == g.UUID {
			r, err := d.Bandwidth(ctx, time.Second)
			return r.H2DGBps, r.D2HGBps, r.DeviceGBps, err
		}
	}
	return 0, 0, 0, fmt.Errorf("cuda: no device with UUID %s", g.UUID)
}

// BandwidthResult is a device's measured copy rates in GB/s (10⁹ bytes/s).
// DeviceGBps counts bytes read plus bytes written.
type BandwidthResult struct {
	H2DGBps    float64 `json:"h2d_gbps"`
	D2HGBps    float64 `json:"d2h_gbps"`
	DeviceGBps float64 `json:"device_gbps"`
}

// Bandwidth measures pinned host↔device and device-to-device copies, each
// repeated for about d/3.
func (b *Backend) Bandwidth(ctx context.Context, device int, d time.Duration) (BandwidthResult, error) {
	return b.devs[device%len(b.devs)].Bandwidth(ctx, d)
}

func (d *device) Bandwidth(ctx context.Context, budget time.Duration) (BandwidthResult, error) {
	var r BandwidthResult
	err := d.do(func() error {
		var host unsafe.Pointer
		if rc := C.pog_host_alloc(&host, bandwidthBytes); rc != 0 {
			return fmt.Errorf("cuMemAllocHost(%d): CUresult %d", bandwidthBytes, int(rc))
		}
		defer C.pog_host_free(host)
		src, err := cu.MemAlloc(bandwidthBytes)
		if err != nil {
			return err
		}
		defer cu.MemFree(src)
		dst, err := cu.MemAlloc(bandwidthBytes)
		if err != nil {
			return err
		}
		defer cu.MemFree(dst)
		var ev [2]cu.Event
		for i := range ev {
			if ev[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
				return err
			}
			defer cu.DestroyEvent(&ev[i])
		}
		copies := []struct {
			out  *float64
			mult float64
			copy func() error
		}{
			{&r.H2DGBps, 1, func() error { return cu.MemcpyHtoDAsync(src, host, bandwidthBytes, d.stream) }},
			{&r.D2HGBps, 1, func() error { return cu.MemcpyDtoHAsync(host, src, bandwidthBytes, d.stream) }},
			{&r.DeviceGBps, 2, func() error { return cu.MemcpyDtoDAsync(dst, src, bandwidthBytes, d.stream) }},
		}
		for _, c := range copies {
			if err := c.copy(); err != nil { // warm-up
				return err
			}
			var total time.Duration
			var n int
			for total < budget/3 && n < 1000 && ctx.Err() == nil {
				if err := ev[0].Record(d.stream); err != nil {
					return err
				}
				if err := c.copy(); err != nil {
					return err
				}
				if err := ev[1].Record(d.stream); err != nil {
					return err
				}
				if err := ev[1].Synchronize(); err != nil {
					return err
				}
				total += elapsed(ev[0], ev[1])
				n++
			}
			if total > 0 {
				*c.out = c.mult * float64(n) * bandwidthBytes / total.Seconds() / 1e9
			}
		}
		return ctx.Err()
	})
	return r, err
}
