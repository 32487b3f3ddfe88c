package gemmsim

/*
#cgo CFLAGS: -O2 -std=c99 -Wall -I${SRCDIR}/../src
#cgo LDFLAGS: -lm
#include "sim.h"
*/
import "C"

import "unsafe"

// Faults counts what a replay observed going wrong; all fields must be 0.
type Faults struct {
	OOBReads, OOBWrites, Misaligned, SmemOverlap, SmemGap, UninitReads, LdmConflicts, SplitRuns uint64
}

func faults(f *C.pog_sim_faults) Faults {
	return Faults{
		OOBReads:     uint64(f.oob_reads),
		OOBWrites:    uint64(f.oob_writes),
		Misaligned:   uint64(f.misaligned),
		SmemOverlap:  uint64(f.smem_overlap),
		SmemGap:      uint64(f.smem_gap),
		UninitReads:  uint64(f.uninit_reads),
		LdmConflicts: uint64(f.ldm_conflicts),
		SplitRuns:    uint64(f.split_runs),
	}
}

func fptr(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

func iptr(s []int32) *C.int {
	if len(s) == 0 {
		return nil
	}
	return (*C.int)(unsafe.Pointer(&s[0]))
}

// GemmF16 replays pog_gemm_f16 over every block of the grid. a holds
// batches·Mp·Kp values, bt batches·Np·Kp (halves, given as float32), c
// batches·M·N outputs.
func GemmF16(a, bt []float32, c []int32, m, n, kp, t, batches uint64) Faults {
	var f C.pog_sim_faults
	C.pog_sim_gemm_f16(fptr(a), fptr(bt), iptr(c), C.ulonglong(m), C.ulonglong(n),
		C.ulonglong(kp), C.ulonglong(t), C.ulonglong(batches), &f)
	return faults(&f)
}

// GemmF32 replays pog_gemm_f32; the arguments are as for GemmF16.
func GemmF32(a, bt []float32, c []int32, m, n, kp, t, batches uint64) Faults {
	var f C.pog_sim_faults
	C.pog_sim_gemm_f32(fptr(a), fptr(bt), iptr(c), C.ulonglong(m), C.ulonglong(n),
		C.ulonglong(kp), C.ulonglong(t), C.ulonglong(batches), &f)
	return faults(&f)
}

// F32ToTiles replays pog_f32_to_tiles on a gx×gy grid: cf holds rows·N
// floats, c rows·N outputs.
func F32ToTiles(cf []float32, c []int32, m, n, t, rows uint64, gx, gy uint) Faults {
	var f C.pog_sim_faults
	C.pog_sim_f32_to_tiles(fptr(cf), iptr(c), C.ulonglong(m), C.ulonglong(n), C.ulonglong(t),
		C.ulonglong(rows), C.uint(gx), C.uint(gy), &f)
	return faults(&f)
}

// BlockTileFaults counts the tiles pog_gemm_block_tile maps out of the
// gx×gy grid or twice; 0 for a bijection.
func BlockTileFaults(gx, gy uint) uint64 {
	return uint64(C.pog_sim_block_tile_faults(C.uint(gx), C.uint(gy)))
}
