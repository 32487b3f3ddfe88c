//go:build linux && cgo

package hw

import (
	"context"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// board is what the mocks leave unset (their Func fields are nil and
// panic): PCIe link, clocks and power limit, per model.
type board struct {
	gen, width                    int
	sm, smMax, mem, memMax, power uint32
}

var (
	h100Board = board{gen: 5, width: 16, sm: 345, smMax: 1980, mem: 2619, memMax: 2619, power: 700000}
	h200Board = board{gen: 5, width: 16, sm: 1980, smMax: 1980, mem: 3201, memMax: 3201, power: 700000}
	a100Board = board{gen: 4, width: 16, sm: 210, smMax: 1410, mem: 1215, memMax: 1215, power: 400000}
)

// equip sets every device method ReadNVML calls that the mock leaves nil.
// Idle GPUs train their links down: the current generation is one less.
func equip(s *server.Server, b board) *server.Server {
	for _, d := range s.Devices {
		dev := d.(*server.Device)
		dev.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return b.gen - 1, nvml.SUCCESS }
		dev.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return b.gen, nvml.SUCCESS }
		dev.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return b.width, nvml.SUCCESS }
		dev.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return b.width, nvml.SUCCESS }
		dev.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			switch c {
			case nvml.CLOCK_SM:
				return b.sm, nvml.SUCCESS
			case nvml.CLOCK_MEM:
				return b.mem, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		dev.GetMaxClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			switch c {
			case nvml.CLOCK_SM:
				return b.smMax, nvml.SUCCESS
			case nvml.CLOCK_MEM:
				return b.memMax, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		dev.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return b.power, nvml.SUCCESS }
	}
	return s
}

// shutdowns counts s's Shutdown calls.
func shutdowns(s *server.Server) *int {
	n := new(int)
	s.ShutdownFunc = func() nvml.Return { *n++; return nvml.SUCCESS }
	return n
}

func device(s *server.Server, i int) *server.Device { return s.Devices[i].(*server.Device) }

func TestReadNVML(t *testing.T) {
	tests := []struct {
		name      string
		server    func() *server.Server
		gpus      int
		model     string
		memory    uint64
		cc        [2]int
		board     board
		driver    string
		cuda      string
		init      bool     // Init succeeds, so Shutdown must be called once
		wantNotes []string // each must appear; none at all when empty
		check     func(t *testing.T, gpus []GPU)
	}{
		{name: "dgx h100", server: func() *server.Server { return equip(dgxh100.New(), h100Board) },
			gpus: 8, model: "NVIDIA H100 80GB HBM3", memory: 80 << 30, cc: [2]int{9, 0}, board: h100Board,
			driver: "550.54.15", cuda: "12.4", init: true},
		{name: "dgx h200", server: func() *server.Server { return equip(dgxh200.New(), h200Board) },
			gpus: 8, model: "NVIDIA H200 141GB HBM3e", memory: 144384 << 20, cc: [2]int{9, 0}, board: h200Board,
			driver: "550.54.15", cuda: "12.4", init: true},
		{name: "dgx a100", server: func() *server.Server { return equip(dgxa100.New(), a100Board) },
			gpus: 8, model: "Mock NVIDIA A100-SXM4-40GB", memory: 40 << 30, cc: [2]int{8, 0}, board: a100Board,
			driver: "550.54.15", cuda: "12.4", init: true},
		{name: "no driver: Init fails",
			server: func() *server.Server {
				s := dgxh100.New() // nothing but Init may be called
				s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
				return s
			},
			wantNotes: []string{"NVML not available: libnvidia-ml.so.1 not found", "reporting 0 GPUs"}},
		{name: "driver not loaded",
			server: func() *server.Server {
				s := dgxh100.New()
				s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
				return s
			},
			wantNotes: []string{"NVML not available: the NVIDIA kernel driver is not loaded; reporting 0 GPUs"}},
		{name: "device count fails",
			server: func() *server.Server {
				s := dgxh100.New()
				s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
				return s
			},
			driver: "550.54.15", cuda: "12.4", init: true,
			wantNotes: []string{"NVML device count: ERROR_UNKNOWN; reporting 0 GPUs"}},
		{name: "per-device and system errors leave fields empty",
			server: func() *server.Server {
				s := equip(dgxh100.New(), h100Board)
				s.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_SUPPORTED }
				s.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NO_PERMISSION }
				get := s.DeviceGetHandleByIndexFunc
				s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
					if i == 5 {
						return nil, nvml.ERROR_GPU_IS_LOST
					}
					return get(i)
				}
				d := device(s, 2)
				d.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
				d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
				d.GetNameFunc = func() (string, nvml.Return) { return "garbage", nvml.ERROR_UNKNOWN }
				d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_UNKNOWN }
				d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
				return s
			},
			gpus: 7, init: true,
			wantNotes: []string{"NVIDIA driver version: ERROR_NOT_SUPPORTED", "CUDA driver version: ERROR_NO_PERMISSION",
				"GPU 5: skipped, NVML cannot open it: ERROR_GPU_IS_LOST", "GPU 2 power limit: ERROR_NOT_SUPPORTED",
				"GPU 2 max PCIe generation: ERROR_NOT_SUPPORTED", "GPU 2 name: ERROR_UNKNOWN", "GPU 2 memory: ERROR_UNKNOWN",
				"GPU 2 SM clock: ERROR_NOT_SUPPORTED", "GPU 2 memory clock: ERROR_NOT_SUPPORTED"},
			check: func(t *testing.T, gpus []GPU) {
				for _, g := range gpus {
					if g.Index == 5 {
						t.Errorf("lost GPU 5 listed: %+v", g)
					}
				}
				g := gpus[2]
				if g.Index != 2 || g.Name != "" || g.MemoryBytes != 0 || g.PowerLimitMW != 0 || g.PCIeGenMax != 0 ||
					g.SMClockMHz != 0 || g.MemClockMHz != 0 {
					t.Errorf("GPU 2 fields not left empty: %+v", g)
				}
				if g.UUID == "" || g.PCIeGen != 4 || g.SMClockMaxMHz != 1980 || g.ComputeMajor != 9 {
					t.Errorf("GPU 2 lost fields that read fine: %+v", g)
				}
				if gpus[5].Index != 6 || gpus[5].Name != "NVIDIA H100 80GB HBM3" {
					t.Errorf("GPU after the lost one: %+v", gpus[5])
				}
			}},
		{name: "shutdown fails",
			server: func() *server.Server {
				s := equip(dgxh100.NewWithGPUs(), h100Board) // no GPUs at all
				s.ShutdownFunc = func() nvml.Return { return nvml.ERROR_UNKNOWN }
				return s
			},
			driver: "550.54.15", cuda: "12.4", wantNotes: []string{"NVML shutdown: ERROR_UNKNOWN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.server()
			var n *int
			if tt.init {
				n = shutdowns(s)
			}
			inv := ReadNVML(s)
			if len(inv.GPUs) != tt.gpus || inv.GPUs == nil {
				t.Fatalf("%d GPUs (%v), want %d; notes %q", len(inv.GPUs), inv.GPUs, tt.gpus, inv.Notes)
			}
			if inv.Driver != tt.driver || inv.CUDA != tt.cuda {
				t.Errorf("driver %q, CUDA %q; want %q, %q", inv.Driver, inv.CUDA, tt.driver, tt.cuda)
			}
			if n != nil && *n != 1 {
				t.Errorf("Shutdown called %d times after a successful Init", *n)
			}
			all := strings.Join(inv.Notes, "\n")
			for _, w := range tt.wantNotes {
				if !strings.Contains(all, w) {
					t.Errorf("notes %q lack %q", inv.Notes, w)
				}
			}
			if len(tt.wantNotes) == 0 && len(inv.Notes) > 0 {
				t.Errorf("unexpected notes %q", inv.Notes)
			}
			if tt.check != nil {
				tt.check(t, inv.GPUs)
				return
			}
			uuids := map[string]bool{}
			for i, g := range inv.GPUs {
				b := tt.board
				want := GPU{Index: i, Name: tt.model, UUID: g.UUID, MemoryBytes: tt.memory,
					ComputeMajor: tt.cc[0], ComputeMinor: tt.cc[1],
					PCIeGen: b.gen - 1, PCIeGenMax: b.gen, PCIeWidth: b.width, PCIeWidthMax: b.width,
					SMClockMHz: b.sm, SMClockMaxMHz: b.smMax, MemClockMHz: b.mem, MemClockMaxMHz: b.memMax,
					PowerLimitMW: b.power}
				if g != want {
					t.Errorf("GPU %d:\n got %+v\nwant %+v", i, g, want)
				}
				if !strings.HasPrefix(g.UUID, "GPU-") || uuids[g.UUID] {
					t.Errorf("GPU %d UUID %q missing or repeated", i, g.UUID)
				}
				uuids[g.UUID] = true
			}
		})
	}
}

// TestMeasureWithNVMLMock runs the whole measurement on a mocked DGX H100.
func TestMeasureWithNVMLMock(t *testing.T) {
	s := equip(dgxh100.New(), h100Board)
	opts := tinyOptions(t)
	opts.Inventory = func() GPUInventory { return ReadNVML(s) }
	r, err := Measure(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 8 || r.GPUs[7].Name != "NVIDIA H100 80GB HBM3" || r.Driver != "550.54.15" || r.CUDA != "12.4" {
		t.Fatalf("report %+v", r)
	}
	if !hasNote(r, "GPU bandwidth (host↔device, device memory): not measured (CPU build)") {
		t.Errorf("notes %q lack the CPU-build bandwidth note", r.Notes)
	}
	for _, g := range r.GPUs {
		if g.H2DGBps != 0 || g.D2HGBps != 0 || g.DeviceGBps != 0 {
			t.Errorf("GPU %d has bandwidths without a GPU backend: %+v", g.Index, g)
		}
	}
}

// TestReadNVMLThisMachine calls the real library: without a driver it must
// report no GPUs and say why; with one, every GPU has a name.
func TestReadNVMLThisMachine(t *testing.T) {
	inv := defaultInventory()
	if len(inv.GPUs) == 0 {
		if len(inv.Notes) == 0 || !strings.Contains(inv.Notes[0], "reporting 0 GPUs") {
			t.Errorf("no GPUs and no reason: %q", inv.Notes)
		}
		return
	}
	for _, g := range inv.GPUs {
		if g.Name == "" || g.MemoryBytes == 0 {
			t.Errorf("GPU %+v (notes %q)", g, inv.Notes)
		}
	}
}
