package miner

import (
	"fmt"
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/protocol/hostround"
)

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
func (m *Miner) ramLoop(done <-chan struct{}) {
	defer m.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		e, err := m.RAMEpoch(m.Gossip.EpochAt(time.Now()))
		var built time.Duration
		if err == nil {
			_, built, err = m.ram.dataset(e)
		}
		if err != nil {
			m.Log.Error("ram dataset not built", "err", err)
		} else if built > 0 {
			m.Log.Info("ram dataset built", "bytes", 64*m.ram.items, "seconds", fmt.Sprintf("%.1f", built.Seconds()))
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// acceptsRAMEpoch says whether a challenge's RAM epoch is one this miner
// holds or may build: see buildable.
func (m *Miner) acceptsRAMEpoch(e memwalk.Epoch) bool {
	return m.ram.holds(e) || buildable(e, m.RAMEpoch, m.Gossip.EpochAt(time.Now()))
}

// buildable says whether a RAM epoch not held is worth building for a
// challenge at epoch now: the one in force then, or the next epoch's (a
// validator whose clock is ahead at a period's boundary), never a past
// one, which a slot owner could name at the boundary to make the miner
// rebuild a dataset it has just replaced.
func buildable(e memwalk.Epoch, in func(uint64) (memwalk.Epoch, error), now uint64) bool {
	for _, x := range []uint64{now, now + 1} {
		if r, err := in(x); err == nil && r == e {
			return true
		}
	}
	return false
}
