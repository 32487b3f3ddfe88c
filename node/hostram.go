package node

import (
	"fmt"
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol/hostround"
)

// The RAM host proof's epochs (SPEC §23.9): every ram_period_epochs
// epochs the network's RAM epoch changes, miners rebuild their datasets
// from its light cache and validators check walks against that cache.

// periodEpoch is RAM period p's epoch. Its seed is the period's alone: no
// set of records is counted alike by every node (one published at a
// finality time is in some final sets only), and a miner whose seed
// differs from a validator's refuses its RAM rounds for the whole period.
func periodEpoch(c NetworkConfig, p uint64) memwalk.Epoch {
	return memwalk.Epoch{Seed: memwalk.PeriodSeed(p), CacheLog: uint8(c.RAMCacheLog), Rounds: c.RAMItemRounds}
}

// ramEpoch is the RAM epoch in force at epoch e: period ⌊e ÷ P⌋'s.
func (n *Node) ramEpoch(e uint64) (memwalk.Epoch, error) {
	re := periodEpoch(n.cfg.Network, e/max(1, n.cfg.Network.RAMPeriodEpochs))
	return re, re.Validate()
}

// ramHolder is a miner's dataset: items items of the current RAM epoch,
// keyed by its ID, rebuilt when the epoch changes.
type ramHolder struct {
	miner   []byte
	items   uint64
	workers int

	mu    sync.Mutex // held while building
	epoch memwalk.Epoch
	data  *memwalk.Dataset
}

// dataset returns e's dataset, first building it (and dropping the
// previous one) if the holder has another epoch's. built is the build's
// duration, 0 if none was needed.
func (h *ramHolder) dataset(e memwalk.Epoch) (d *memwalk.Dataset, built time.Duration, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.data != nil && h.epoch == e {
		return h.data, 0, nil
	}
	t0 := time.Now()
	c, err := hostround.RAMCache(e)
	if err != nil {
		return nil, 0, err
	}
	h.data = nil // the old dataset's memory goes before the new one is built
	if h.data, err = memwalk.Build(c.For(h.miner), h.items, h.workers); err != nil {
		return nil, 0, fmt.Errorf("building the ram dataset: %w", err)
	}
	h.epoch = e
	return h.data, time.Since(t0), nil
}

// holds says whether the dataset held is e's.
func (h *ramHolder) holds(e memwalk.Epoch) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.data != nil && h.epoch == e
}

// ramLoop keeps the miner's dataset on the current RAM epoch, so that a
// challenge finds it built.
func (m *miner) ramLoop(done <-chan struct{}) {
	defer m.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		e, err := m.n.ramEpoch(m.n.view.epochAt(time.Now()))
		var built time.Duration
		if err == nil {
			_, built, err = m.ram.dataset(e)
		}
		if err != nil {
			m.n.log.Error("ram dataset not built", "err", err)
		} else if built > 0 {
			m.n.log.Info("ram dataset built", "bytes", 64*m.ram.items, "seconds", fmt.Sprintf("%.1f", built.Seconds()))
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// acceptsRAMEpoch says whether a challenge's RAM epoch is the one in force
// now or within an epoch of now (clock skew between validator and miner):
// any other would make the miner build a dataset for nothing.
func (m *miner) acceptsRAMEpoch(e memwalk.Epoch) bool {
	if m.ram.holds(e) {
		return true // in force when it was built: nothing to build
	}
	l := m.n.cfg.Network.EpochLength.Duration
	now := time.Now()
	for _, t := range []time.Time{now.Add(-l), now, now.Add(l)} {
		if in, err := m.n.ramEpoch(m.n.view.epochAt(t)); err == nil && in == e {
			return true
		}
	}
	return false
}
