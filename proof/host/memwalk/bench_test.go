package memwalk

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/pog-network/pog/proof/host"
	"lukechampine.com/blake3"
)

// The benchmarks compare a walk over a resident dataset with the same walk
// recomputing every item from the light cache (the cheater holding nothing),
// at the default cache and rounds. The resident dataset is filled from the
// XOF instead of Build: its bytes do not change a step's time, and building
// 2 GiB of real items would take minutes on a shared machine.

const benchDatasetItems = 1 << 25 // 2 GiB: beyond this machine's 300 MiB L3

var (
	benchOnce  sync.Once
	benchCache *Cache
	benchData  *Dataset
)

func benchSetup(b *testing.B) (*Cache, *Dataset) {
	benchOnce.Do(func() {
		e := Epoch{Seed: [32]byte{1}, CacheLog: DefaultCacheLog, Rounds: DefaultRounds}
		var err error
		if benchCache, err = NewCache(&e); err != nil {
			b.Fatal(err)
		}
		benchData = &Dataset{words: make([]uint64, ItemWords*benchDatasetItems), items: benchDatasetItems}
		var raw [1 << 16]byte // filled from the XOF a block at a time
		key := host.Derive("bench dataset")
		xof := blake3.New(32, key[:]).XOF()
		for i := 0; i < len(benchData.words); i += len(raw) / 8 {
			xof.Read(raw[:])
			for k := range len(raw) / 8 {
				benchData.words[i+k] = binary.LittleEndian.Uint64(raw[8*k:])
			}
		}
	})
	return benchCache, benchData
}

// BenchmarkItem is one item from the light cache: the cheater's cost per
// step it does not hold, and the validator's per verified step.
func BenchmarkItem(b *testing.B) {
	c, _ := benchSetup(b)
	m := c.For([]byte("m"))
	var r [ItemWords]uint64
	b.ResetTimer()
	for i := range b.N {
		m.Item(uint64(i)*2654435761, &r)
	}
}

// BenchmarkWalkResident is one walk step over the resident 2 GiB dataset:
// one dependent DRAM read plus eight multiplies.
func BenchmarkWalkResident(b *testing.B) {
	_, d := benchSetup(b)
	b.ResetTimer()
	Walk(d, d.items, 1, uint64(b.N))
}

// BenchmarkWalkRecomputed is the same walk computing each item instead.
func BenchmarkWalkRecomputed(b *testing.B) {
	c, _ := benchSetup(b)
	b.ResetTimer()
	Walk(c.For([]byte("m")), benchDatasetItems, 1, uint64(b.N))
}

// BenchmarkWalkParallel runs W walks as the prover does (Lanes interleaved
// per goroutine, one goroutine per CPU): random-read bandwidth, 64 B per
// step over all walks.
func BenchmarkWalkParallel(b *testing.B) {
	_, d := benchSetup(b)
	for _, w := range []uint64{2, 8, 16, 64} {
		b.Run(fmt.Sprintf("walks=%d", w), func(b *testing.B) {
			steps := max(uint64(b.N)/w, 1)
			p := &Params{Epoch: Epoch{CacheLog: DefaultCacheLog, Rounds: DefaultRounds}, Miner: []byte("m"), Items: d.items,
				Shape: host.Shape{Chains: w, Steps: steps, Segment: steps}}
			if w == 2 && steps == 1 { // a one-checkpoint shape is refused
				p.Steps, p.Segment = 2, 1
			}
			b.SetBytes(64)
			b.ResetTimer()
			if _, err := Prove(p, d, 0); err != nil {
				b.Fatal(err)
			}
		})
	}
}
