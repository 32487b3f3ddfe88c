package hostround

import (
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host/memwalk"
)

// Work bounds both sides hold a host round to: the validator sizes no
// round past them and the miner refuses one that is.
const (
	// MaxWork bounds the chain or walk steps a miner runs for one host
	// round (about a minute of one core of cpuwork).
	MaxWork = 1 << 31
	// MaxPlotWork bounds the block reads of one storage round.
	MaxPlotWork = 1 << 24
)

// slack multiplies a kind's work at its step bound in root_by: a virtual
// machine's DRAM reads take about twice the bound.
var slack = [...]float64{KindCPU: 2, KindRAM: 8, KindPlot: 4}

// RootBy is when pr's root is due: after the round trip, a second of
// slack and a kind's multiple of the work at the step bound. A windowed
// CPU round's is after its run and the round trip, at most WindowEnd of
// its window, and WindowSlack. The validator plans with it; the miner
// refuses a challenge due later than it allows.
func RootBy(pr Proof, rtt time.Duration) time.Duration {
	if c, ok := Windowed(pr); ok {
		return min(c.Run()+rtt, WindowEnd(c.Window())) + WindowSlack(c.Window())
	}
	return rtt + time.Second + time.Duration(slack[pr.Kind()]*float64(pr.Dims().Steps)*pr.BoundNs())
}

// WindowSlack is how late after its run and round trip a windowed round's
// root may arrive: the skew of the owners' sends in a host slot, the
// segment a chain is in when the run ends, and the commitment; 1/40 of
// the window (50 ms at the default 2 s), so that what one server earns
// its identities, 1 + 1/19 + 1/40 of its rate (SPEC §23.2), does not
// depend on the window.
func WindowSlack(window time.Duration) time.Duration { return window / 40 }

// WindowEnd bounds a windowed round's run and round trip: the window and
// 1/19 of it, the round trip a root's arrival may be reduced by (§23.1's
// 1/20 of the arrival). Without the bound, an identity that slowed its
// pongs would be allowed a later root, and one server answering identities
// in turn would run the later ones' steps after the first's window.
func WindowEnd(window time.Duration) time.Duration {
	return window + window/(MaxRTTDivisor-1)
}

// RunFor is how long a miner with round trip rtt runs a window: all of it,
// less what its round trip exceeds window/19 by, so that its root arrives
// within WindowEnd (it is credited that much less, §23.2).
func RunFor(window, rtt time.Duration) time.Duration {
	return max(window-max(0, rtt-window/(MaxRTTDivisor-1)), time.Millisecond)
}

// ramCaches holds the light caches of the last two RAM epochs a process
// used: every validator and miner of one process (a testnet) shares them.
var ramCaches = &cacheMemo{}

type cacheMemo struct {
	mu   sync.Mutex
	held []cachedEpoch // newest last, at most 2
}

type cachedEpoch struct {
	e memwalk.Epoch
	c *memwalk.Cache
}

// RAMCache returns e's light cache, building it (one XOF of
// 64·2^CacheLog bytes) if the process does not hold it.
func RAMCache(e memwalk.Epoch) (*memwalk.Cache, error) { return ramCaches.get(e) }

func (m *cacheMemo) get(e memwalk.Epoch) (*memwalk.Cache, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range m.held {
		if h.e == e {
			return h.c, nil
		}
	}
	c, err := memwalk.NewCache(&e)
	if err != nil {
		return nil, err
	}
	m.held = append(m.held[max(0, len(m.held)-1):], cachedEpoch{e, c})
	return c, nil
}
