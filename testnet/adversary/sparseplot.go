package adversary

import (
	"sync"

	"github.com/pog-network/pog/proof/host/plot"
)

// SparseFactor is how many times its storage the sparse-plot adversary's
// plot is: it keeps 1/SparseFactor of the plot's labels and regenerates
// every block an audit reads from them.
const SparseFactor = 32

// SparsePlotNs is the sparse-plot adversary's walk step: a block of the
// default parameters regenerated from the best layout of 1/SparseFactor of
// its labels that SPEC §23.4's bound ranges over, on as many cores as its
// runs need, each of the fastest plausible speed. The testnet's small
// blocks would regenerate faster than the bound assumes (SPEC §23.9), so
// the step is the default network's, as the honest miners' flash read is.
var SparsePlotNs = sync.OnceValue(func() float64 {
	p := &plot.Plot{Miner: []byte("sparse-plot"), BlockLog: plot.DefaultBlockLog, Rounds: plot.DefaultRounds, Blocks: 2}
	return float64(p.Graph(0).BestSparse(1.0/SparseFactor)) * plot.FastCompressNs
})
