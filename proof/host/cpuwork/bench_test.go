package cpuwork

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/pog-network/pog/proof/host"
)

// BenchmarkStep is one chain step over the default 512 KiB table: a core's
// dependent L2 read plus multiply, rotate and add.
func BenchmarkStep(b *testing.B) {
	p := &Params{Miner: []byte("m"), TableLog: DefaultTableLog}
	t := Table(p)
	var x State
	b.ResetTimer()
	Run(t, &x, uint64(b.N))
}

// BenchmarkProve runs C chains as the prover does (one goroutine per CPU):
// ns per step over all chains.
func BenchmarkProve(b *testing.B) {
	for _, c := range []uint64{1, 2, 8} {
		b.Run(fmt.Sprintf("chains=%d", c), func(b *testing.B) {
			steps := max(uint64(b.N)/c/1024, 1) * 1024
			p := &Params{Miner: []byte("m"), TableLog: DefaultTableLog, Shape: host.Shape{Chains: c, Steps: steps, Segment: steps / 2}}
			b.ResetTimer()
			if _, err := Prove(p, 0); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkInterleaved runs two chains in one fused loop on one goroutine
// (what a miner running more chains than cores would write): ns per step
// of either chain, to compare with BenchmarkStep's one chain.
func BenchmarkInterleaved(b *testing.B) {
	p := &Params{Miner: []byte("m"), TableLog: DefaultTableLog}
	t := Table(p)
	var x, y State
	y[0] = 1
	b.ResetTimer()
	runPair(t, &x, &y, uint64(b.N/2))
}

func runPair(t []uint64, x, y *State, n uint64) {
	mask := uint64(len(t) - 1)
	var v, w State
	for ; n > 0; n-- {
		for j := range x {
			v[j], w[j] = t[x[j]&mask], t[y[j]&mask]
		}
		for j := range x {
			x[j] = bits.RotateLeft64((x[j]^v[j])*mul, 29) + v[(j+1)%Lanes]
			y[j] = bits.RotateLeft64((y[j]^w[j])*mul, 29) + w[(j+1)%Lanes]
		}
	}
}

// BenchmarkVerify is the validator's cost for a 66-segment sample of a
// 2-chain, 2^20-step challenge with 2^10-step segments (2048 checkpoints),
// table included: 3.2 % of the prover's steps.
func BenchmarkVerify(b *testing.B) {
	p := &Params{Miner: []byte("m"), TableLog: DefaultTableLog, Shape: host.Shape{Chains: 2, Steps: 1 << 20, Segment: 1 << 10}}
	states, err := Prove(p, 0)
	if err != nil {
		b.Fatal(err)
	}
	root, leaves, _ := host.Commit(Tag, states)
	segs := host.Sample([32]byte{}, root, p.Encode(), p.Shape, 66)
	op, _ := host.Open(p.Shape, states, leaves, segs)
	b.ResetTimer()
	for range b.N {
		if err := Verify(p, root, segs, op); err != nil {
			b.Fatal(err)
		}
	}
}
