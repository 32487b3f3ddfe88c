package commit

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/asmgen -out hash_amd64.s

// useAVX512 selects the gather-free AVX-512 tile hasher; tests clear it to
// cover the guts fallback.
var useAVX512 = cpu.X86.HasAVX512F

// hashChunks16 stores the chaining values of the 16 whole chunks in buf, the
// first of which has chunk counter counter.
//
//go:noescape
func hashChunks16(cvs *[16][8]uint32, buf *[16 * ChunkSize]byte, counter uint64)

// hashParents16 stores in out[i] the chaining value of the parent of in[2i]
// and in[2i+1].
//
//go:noescape
func hashParents16(out *[16][8]uint32, in *[32][8]uint32)

func tileCV(tile []byte, counter uint64) [8]uint32 {
	switch {
	case !useAVX512 || len(tile) < group:
		return tileCVGuts(tile, counter)
	case len(tile) <= smallTile:
		// A scratch sized for small tiles: zeroing the full one costs them
		// a visible share of their hashing (BENCHMARKS.md §2).
		var cvs [smallTile / ChunkSize][8]uint32
		return treeCV(cvs[:], tile, counter)
	}
	var cvs [MaxTileBytes / ChunkSize][8]uint32
	return treeCV(cvs[:], tile, counter)
}

const smallTile = 4 * group

// smallTileCVs sets cvs to the CVs of the tiles of tileBytes (fewer than 16
// chunks) in data, the first tile numbered first, 16 chunks at a time: one
// such tile alone is hashed without SIMD, or in a 16-lane call mostly
// empty. It returns how many it set (whole calls' worth; none without
// AVX-512).
func smallTileCVs(cvs []CV, data []byte, tileBytes int, first uint64) int {
	if !useAVX512 {
		return 0
	}
	c := tileBytes / ChunkSize // chunks a tile: 1, 2, 4 or 8
	per := 16 / c
	var words [16][8]uint32
	n := len(cvs) / per * per
	for i := 0; i < n; i += per {
		hashChunks16(&words, (*[16 * ChunkSize]byte)(data[i*tileBytes:]), (first+uint64(i))*uint64(c))
		// Each tile's chunks are a complete subtree: merge them pairwise.
		for step := 1; step < c; step *= 2 {
			for j := 0; j < 16; j += 2 * step {
				words[j] = parentCV(words[j], words[j+step])
			}
		}
		for k := range per {
			cvs[i+k] = wordsToCV(words[k*c])
		}
	}
	return n
}

// treeCV hashes all chunks of tile, then each level of the tree, 16 nodes per
// call, using cvs as scratch (at least 32 entries and one per chunk). The
// levels are merged in place: call i writes cvs[i:i+16] after reading
// cvs[2i:2i+32]. Levels of fewer than 16 parents hash some garbage lanes.
func treeCV(cvs [][8]uint32, tile []byte, counter uint64) [8]uint32 {
	n := len(tile) / ChunkSize
	for i := 0; i < n; i += 16 {
		hashChunks16((*[16][8]uint32)(cvs[i:]), (*[16 * ChunkSize]byte)(tile[i*ChunkSize:]), counter+uint64(i))
	}
	for ; n > 1; n /= 2 {
		for i := 0; i < n/2; i += 16 {
			hashParents16((*[16][8]uint32)(cvs[i:]), (*[32][8]uint32)(cvs[2*i:]))
		}
	}
	return cvs[0]
}

// parents sets level[i] to the parent of level[2i] and level[2i+1] for i <
// pairs, in place; level needs 32 entries of slack past 2·pairs for the
// 16-wide calls' spare lanes, whose results land at or past pairs.
func parents(level [][8]uint32, pairs int) {
	if !useAVX512 {
		parentsGuts(level, pairs)
		return
	}
	for i := 0; i < pairs; i += 16 {
		hashParents16((*[16][8]uint32)(level[i:]), (*[32][8]uint32)(level[2*i:]))
	}
}
