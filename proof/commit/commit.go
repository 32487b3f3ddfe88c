// Package commit owns the tile commitment: the BLAKE3 hash tree over a
// tile-major output, inclusion proofs for one tile and compact batch proofs for
// many.
//
// A tile is a power-of-two number of 1 KiB BLAKE3 chunks placed at an offset
// that is a multiple of its size, so it is a complete subtree of the standard
// BLAKE3 tree. Its chaining value is a leaf here, and the root over the leaves
// is exactly blake3.Sum256 of the serialised output: `b3sum` checks a root.
package commit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"

	"lukechampine.com/blake3/guts"
)

// ChunkSize is the BLAKE3 chunk size; tiles are whole powers of two of it.
const ChunkSize = guts.ChunkSize

// MaxTileBytes bounds a tile so proofs and tile buffers stay small.
const MaxTileBytes = 1 << 20

// CV is a 32-byte BLAKE3 chaining value (eight little-endian words).
type CV [32]byte

// CheckTileBytes reports whether n is a valid tile size: a power-of-two number
// of chunks, at most MaxTileBytes.
func CheckTileBytes(n int) error {
	if n < ChunkSize || n > MaxTileBytes || n&(n-1) != 0 {
		return fmt.Errorf("tile size %d bytes: must be a power of two between %d and %d", n, ChunkSize, MaxTileBytes)
	}
	return nil
}

// TileCV returns the chaining value of tile number index: the non-root output
// of the subtree over tile, whose first chunk has counter index*chunksPerTile.
// The counter binds each leaf to its position. len(tile) must pass
// CheckTileBytes.
func TileCV(tile []byte, index uint64) CV {
	return wordsToCV(tileCV(tile, index*uint64(len(tile)/ChunkSize)))
}

const group = guts.MaxSIMD * ChunkSize // chunks hashed in one SIMD call

// tileCVGuts is the portable tileCV: guts hashes 16 chunks at a time (with
// message gathers on amd64) and returns their subtree root.
func tileCVGuts(tile []byte, counter uint64) [8]uint32 {
	switch {
	case len(tile) == ChunkSize:
		return guts.ChainingValue(guts.CompressChunk(tile, &guts.IV, counter, 0))
	case len(tile) < group:
		var buf [group]byte
		copy(buf[:], tile)
		return guts.ChainingValue(guts.CompressBuffer(&buf, len(tile), &guts.IV, counter, 0))
	}
	// Hash 16-chunk groups with SIMD, then merge the group CVs pairwise: the
	// groups are complete subtrees, so this is the BLAKE3 tree above them.
	var stack [MaxTileBytes / group][8]uint32
	n := len(tile) / group
	for g := 0; g < n; g++ {
		buf := (*[group]byte)(tile[g*group:])
		stack[g] = guts.ChainingValue(guts.CompressBuffer(buf, group, &guts.IV, counter+uint64(g*guts.MaxSIMD), 0))
	}
	for ; n > 1; n /= 2 {
		for i := 0; i < n/2; i++ {
			stack[i] = parentCV(stack[2*i], stack[2*i+1])
		}
	}
	return stack[0]
}

// TileCVs hashes a tile-major buffer of whole tiles on workers goroutines
// (<= 0: one per CPU) and returns one leaf per tile.
func TileCVs(data []byte, tileBytes, workers int) ([]CV, error) {
	if err := CheckTileBytes(tileBytes); err != nil {
		return nil, err
	}
	if len(data)%tileBytes != 0 {
		return nil, fmt.Errorf("output of %d bytes is not a whole number of %d-byte tiles", len(data), tileBytes)
	}
	n := len(data) / tileBytes
	out := make([]CV, n)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	// Each worker takes a contiguous run of tiles, so that the data it reads
	// next is what hashChunks16 prefetches.
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			lo, hi := w*n/workers, (w+1)*n/workers
			if tileBytes < group {
				lo += smallTileCVs(out[lo:hi], data[lo*tileBytes:hi*tileBytes], tileBytes, uint64(lo))
			}
			for i := lo; i < hi; i++ {
				out[i] = TileCV(data[i*tileBytes:(i+1)*tileBytes], uint64(i))
			}
		}(w)
	}
	wg.Wait()
	return out, nil
}

func parentCV(l, r [8]uint32) [8]uint32 {
	return guts.ChainingValue(guts.ParentNode(l, r, &guts.IV, 0))
}

// parentsGuts is the portable parents.
func parentsGuts(level [][8]uint32, pairs int) {
	for i := 0; i < pairs; i++ {
		level[i] = parentCV(level[2*i], level[2*i+1])
	}
}

func parentRoot(l, r [8]uint32) CV {
	n := guts.ParentNode(l, r, &guts.IV, guts.FlagRoot)
	return wordsToCV(guts.ChainingValue(n))
}

func cvToWords(c CV) (w [8]uint32) {
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(c[4*i:])
	}
	return w
}

func wordsToCV(w [8]uint32) (c CV) {
	for i, v := range w {
		binary.LittleEndian.PutUint32(c[4*i:], v)
	}
	return c
}

// leftSize is the number of leaves in the left subtree of a node over n >= 2
// leaves: the largest power of two strictly below n (BLAKE3's left-full tree).
func leftSize(n uint64) uint64 {
	return 1 << (bits.Len64(n-1) - 1)
}

// Root returns the commitment root over leaves: the BLAKE3 hash of the
// tile-major output they were computed from. It needs at least two leaves: a
// lone tile would be the root node itself, finalised differently.
//
// BLAKE3's tree is left-full, which is what pairing each level from the left
// and carrying an odd last node up unchanged builds; levels are hashed 16
// parents at a time where the CPU allows, since a miner's root over 16k
// tiles is on its timed path.
func Root(leaves []CV) (CV, error) {
	n := len(leaves)
	if n < 2 {
		return CV{}, errors.New("commitment needs at least two tiles")
	}
	level := make([][8]uint32, n+32) // slack for the 16-wide passes' spare lanes
	for i := range leaves {
		level[i] = cvToWords(leaves[i])
	}
	for n > 2 {
		carry := level[n-1]
		parents(level, n/2)
		if n%2 == 1 {
			level[n/2] = carry
		}
		n = n/2 + n%2
	}
	return parentRoot(level[0], level[1]), nil
}

func subtree(leaves []CV) [8]uint32 {
	if len(leaves) == 1 {
		return cvToWords(leaves[0])
	}
	k := leftSize(uint64(len(leaves)))
	return parentCV(subtree(leaves[:k]), subtree(leaves[k:]))
}
