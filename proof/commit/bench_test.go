package commit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

const benchBytes = 256 << 20

// BenchmarkTileCVs measures tile hashing; compare with BenchmarkB3sum in the
// same run (MB/s per worker against b3sum --num-threads 1).
func BenchmarkTileCVs(b *testing.B) {
	data := randomBytes(1, benchBytes)
	for _, tile := range []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("tile=%dKiB/workers=%d", tile>>10, workers), func(b *testing.B) {
				b.SetBytes(benchBytes)
				for i := 0; i < b.N; i++ {
					if _, err := TileCVs(data, tile, workers); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkB3sum runs the reference implementation on the same amount of
// data, from the page cache.
func BenchmarkB3sum(b *testing.B) {
	if _, err := exec.LookPath("b3sum"); err != nil {
		b.Skip("b3sum not installed (apt-get install b3sum)")
	}
	path := filepath.Join(b.TempDir(), "data")
	if err := os.WriteFile(path, randomBytes(1, benchBytes), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(benchBytes)
			for i := 0; i < b.N; i++ {
				if err := exec.Command("b3sum", "--num-threads", fmt.Sprint(threads), path).Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRoot measures the root over a 16384×16384 fp16 round's 16384
// leaves (64 KiB tiles), which a miner computes on its timed path; the
// recursive one-parent-at-a-time tree is the reference.
func BenchmarkRoot(b *testing.B) {
	leaves := make([]CV, 16384)
	for i := range leaves {
		copy(leaves[i][:], randomBytes(uint64(i), 32))
	}
	b.Run("levels", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Root(leaves); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("recursive", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k := leftSize(uint64(len(leaves)))
			parentRoot(subtree(leaves[:k]), subtree(leaves[k:]))
		}
	})
}
