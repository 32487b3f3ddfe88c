//go:build !amd64

package commit

func tileCV(tile []byte, counter uint64) [8]uint32 {
	return tileCVGuts(tile, counter)
}

func parents(level [][8]uint32, pairs int) { parentsGuts(level, pairs) }

func smallTileCVs([]CV, []byte, int, uint64) int { return 0 }
