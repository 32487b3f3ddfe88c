package plot

import "slices"

// FastCompressNs is the fastest plausible time of one BLAKE3 compression
// on a commodity core, the attacker's: its seven rounds are a dependent
// chain of about 200 cycles of one-cycle vector operations, 33 ns at
// 6 GHz (SPEC §23.4).
const FastCompressNs = 30

// Graph is one block's label graph: which label of the previous layer
// each label reads.
type Graph struct {
	n       int
	parents [][]uint32 // parents[p][j], for layers p ≥ 1
}

// Graph builds block b's label graph (one generation).
func (p *Plot) Graph(b uint64) *Graph {
	n := p.BlockBytes() / LabelBytes
	g := &Graph{n: n, parents: make([][]uint32, p.Rounds)}
	var last label // the label before each layer's first
	layers(p, b, func(layer int, cur []label) {
		if layer > 0 {
			g.parents[layer] = make([]uint32, n)
			l := last
			for j := range cur {
				g.parents[layer][j] = uint32((uint64(l[0]) | uint64(l[1])<<32) & uint64(n-1))
				l = cur[j]
			}
		}
		last = cur[n-1]
	}, make([]byte, p.BlockBytes()))
	return g
}

// Depth is the least time, in compressions, in which a miner keeping the
// labels keep(layer, j) marks produces the block with unbounded parallel
// cores: a label's first compression needs the label before it in the
// chain, its second also the label of the previous layer it reads; kept
// labels are there at time 0.
func (g *Graph) Depth(keep func(layer, j int) bool) int {
	prevT, curT := make([]int, g.n), make([]int, g.n)
	t := 0 // the time of the label before the current one
	for layer, par := range g.parents {
		for j := range curT {
			switch {
			case keep(layer, j):
				curT[j] = 0
			case layer == 0:
				curT[j] = t + 2
			default:
				curT[j] = max(t+2, prevT[par[j]]+1)
			}
			t = curT[j]
		}
		prevT, curT = curT, prevT
	}
	return maxOf(prevT)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Evenly keeps m labels of each of the given layers, splitting its chain
// into m + 1 runs of equal length.
func Evenly(n, m int, layers []int) func(layer, j int) bool {
	in := make([]bool, slices.Max(layers)+1)
	for _, l := range layers {
		in[l] = true
	}
	return func(layer, j int) bool {
		return layer < len(in) && in[layer] && (j+1)*(m+1)/n != j*(m+1)/n && j < n-1
	}
}

// BestSparse is the least Depth the layouts SPEC §23.4's bound ranges over
// reach with a fraction f of the block's labels kept: ⌊f·n/k⌋ evenly spaced
// labels in each of k layers (the first k or the last k), for every k, and
// nothing kept.
func (g *Graph) BestSparse(f float64) int {
	L := len(g.parents)
	best := g.Depth(func(int, int) bool { return false })
	for k := 1; k <= L; k++ {
		m := int(f * float64(g.n) / float64(k))
		if m < 1 {
			break
		}
		first, last := make([]int, k), make([]int, k)
		for i := range k {
			first[i], last[i] = i, L-1-i
		}
		best = min(best, g.Depth(Evenly(g.n, m, first)), g.Depth(Evenly(g.n, m, last)))
	}
	return best
}

// SparseBound is SPEC §23.4's time/space estimate, in compressions: a
// miner keeping a fraction f of a block of n labels per layer in L layers
// needs about 2·min over k of (n·k²/(f·n + k) + (L − k)·n): in k layers
// f·n/k checkpoints each, splitting the chain into runs of n·k/(f·n + k)
// (equal runs are best for a given k, by Cauchy–Schwarz), computed one
// layer after the other, and the other layers computed whole.
func SparseBound(n, L int, f float64) float64 {
	fn, best := f*float64(n), float64(L*n)
	for k := 1; k <= L && float64(k) <= fn; k++ {
		best = min(best, float64(n*k*k)/(fn+float64(k))+float64((L-k)*n))
	}
	return 2 * best
}
