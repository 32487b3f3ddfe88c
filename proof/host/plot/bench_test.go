package plot

import (
	"path/filepath"
	"testing"
)

func defaultPlot(blocks uint64) *Plot {
	return &Plot{Miner: []byte("bench miner"), BlockLog: DefaultBlockLog, Rounds: DefaultRounds, Blocks: blocks}
}

// BenchmarkGenerate is one default block (64 KiB): the cost of
// regenerating a block instead of reading it, and the per-block plotting
// cost on one core.
func BenchmarkGenerate(b *testing.B) {
	p := defaultPlot(2)
	buf := make([]byte, p.BlockBytes())
	b.SetBytes(int64(p.BlockBytes()))
	for i := range b.N {
		p.Generate(uint64(i), buf)
	}
}

// BenchmarkBuild is the plot build rate on every CPU, written to a file.
func BenchmarkBuild(b *testing.B) {
	p := defaultPlot(uint64(max(b.N, 2)))
	b.SetBytes(int64(p.BlockBytes()))
	f, _, _, err := Create(filepath.Join(b.TempDir(), "plot"), p, 0)
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// BenchmarkReadBlock is one random block read of a 256 MiB plot file with
// its pages dropped from the page cache first (the audit step's read).
func BenchmarkReadBlock(b *testing.B) {
	p := defaultPlot(4096)
	f, _, _, err := Create(filepath.Join(b.TempDir(), "plot"), p, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.DropCache(); err != nil {
		b.Skip("cannot drop the page cache:", err)
	}
	buf := make([]byte, p.BlockBytes())
	b.SetBytes(int64(p.BlockBytes()))
	b.ResetTimer()
	x := uint64(1)
	for range b.N {
		x = x*6364136223846793005 + 1442695040888963407
		if err := f.ReadBlock(x>>32%p.Blocks, buf); err != nil {
			b.Fatal(err)
		}
	}
}
