package testnet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/report"
)

// storeFaultFS wraps m's store filesystem with the store fault, if m has it.
func (r *run) storeFaultFS(m *member, fs vfs.FS) vfs.FS {
	f := r.cfg.Faults.Store
	if f == nil || f.Node != m.info.Name {
		return fs
	}
	at := r.start.Add(f.At)
	return freshWALs{errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		write := op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt
		if write && strings.HasSuffix(op.Path, ".log") && !time.Now().Before(at) {
			return errorfs.ErrInjected
		}
		return nil
	}))}
}

// freshWALs creates each WAL anew instead of recycling an old one:
// errorfs injects into the files it creates but hands a recycled file back
// unwrapped, so a store writing a recycled WAL ran on past its fault
// (explore seed 147).
type freshWALs struct{ vfs.FS }

func (fs freshWALs) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.Remove(oldname); err != nil {
		return nil, err
	}
	return fs.Create(newname, c)
}

// nodeStopped notes why m's node stopped before the run's end, if it did.
// A failed store is swapped for its data reopened without the fault, as an
// operator would find it, so the summary and the invariants read it.
func (r *run) nodeStopped(m *member, err error) {
	if err == nil {
		return
	}
	r.progress("%s stopped: %v", m.info.Name, err)
	r.mu.Lock()
	m.err, m.down = err, true
	r.mu.Unlock()
	if r.sim == nil || !errors.Is(err, node.ErrStoreFailed) {
		return
	}
	_ = m.store.Close() // the injected fault again
	dir := filepath.Join(m.home, config.StoreDir)
	fresh := vfs.NewMem()
	if _, err := vfs.Clone(r.sim.StoreFS(dir), fresh, dir, dir); err != nil {
		r.progress("%s: copying its store: %v", m.info.Name, err)
		return
	}
	st, err := store.Open(dir, store.Options{FS: fresh})
	if err != nil {
		r.progress("%s: reopening its store: %v", m.info.Name, err)
		return
	}
	r.mu.Lock()
	m.store = st
	r.mu.Unlock()
}

// crashRestart runs the crash fault: stop the node at c.At, restart it at
// c.Restart on its store. If the run ends between, the store is reopened
// for the summary only.
func (r *run) crashRestart(ctx context.Context, c netlab.Crash) {
	defer r.wg.Done()
	r.mu.Lock()
	m := r.memberNamed(c.Node)
	r.mu.Unlock()
	if m == nil || m.node == nil || !waitUntil(ctx, r.start.Add(c.At)) {
		return
	}
	r.progress("fault: %s crashes", m.info.Name)
	r.mu.Lock()
	m.down = true
	r.mu.Unlock()
	// Not node.Close from here: Run would call it too, and a second Close
	// waits on a mutex, which synctest does not count as blocked: the
	// bubble's clock would stop while the first waits out a timeout.
	m.halt()
	<-m.done
	if err := m.store.Close(); err != nil {
		r.progress("%s: closing its store: %v", m.info.Name, err)
	}
	if !waitUntil(ctx, r.start.Add(c.Restart)) {
		dir := filepath.Join(m.home, config.StoreDir)
		st, err := store.Open(dir, store.Options{FS: r.sim.StoreFS(dir)})
		r.mu.Lock()
		m.store, m.err = st, err
		r.mu.Unlock()
		return
	}
	if err := r.startNode(ctx, m, m.cfg, m.spec, r); err != nil {
		r.mu.Lock()
		m.err = fmt.Errorf("restart: %w", err)
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	m.down = false
	peers := r.upPeers(m)
	r.mu.Unlock()
	for _, p := range peers {
		_ = m.node.Connect(ctx, p...) // one down or refusing is no matter
	}
	r.progress("fault: %s restarted from its store", m.info.Name)
}

// upPeers is the addresses of every other node still running. r.mu held.
func (r *run) upPeers(m *member) [][]string {
	var out [][]string
	for _, o := range r.members {
		if o != m && o.node != nil && !o.down {
			out = append(out, o.node.Addrs())
		}
	}
	return out
}

// struck names the honest miners a node fault struck: crashed, failed,
// slowed, or cut off from a validator by the partition. Loss strikes
// every node alike, so it leaves them all a fair reference.
func (r *run) struck() map[string]bool {
	f, out := r.cfg.Faults, map[string]bool{}
	if f.Crash != nil {
		out[f.Crash.Node] = true
	}
	if f.Store != nil {
		out[f.Store.Node] = true
	}
	if f.Spike != nil {
		out[f.Spike.Node] = true
	}
	if p := f.Partition; p != nil {
		for _, v := range r.validatorMembers() {
			for _, n := range append(slices.Clone(p.A), p.B...) {
				out[n] = out[n] || p.Splits(n, v.info.Name)
			}
		}
	}
	return out
}

// faultChecks are the invariants that hold under every fault: no round a
// validator reported verified is missing from its store afterwards
// (crashes, store faults), and only the store fault stops a node.
func (r *run) faultChecks() []report.Check {
	if !r.cfg.Faults.Any() {
		return nil
	}
	return []report.Check{r.roundsKept(), r.stops()}
}

func (r *run) roundsKept() report.Check {
	byName := map[string]*member{}
	for _, m := range r.members {
		byName[m.info.Name] = m
	}
	var lost []string
	n := 0
	for _, rd := range r.rounds {
		v := byName[rd.Validator]
		if !rd.Verified || v == nil || v.store == nil {
			continue
		}
		miner := mustPeer(rd.Miner)
		if m := byName[rd.Miner]; m != nil {
			miner = m.id
		}
		n++
		if _, err := v.store.Round(rd.Epoch, rd.Round, []byte(miner)); err != nil {
			lost = append(lost, fmt.Sprintf("%s: epoch %d round %d of %s: %v", rd.Validator, rd.Epoch, rd.Round, rd.Miner, err))
		}
	}
	return report.Check{Name: "no verified round lost", OK: len(lost) == 0,
		Detail: fmt.Sprintf("%d verified rounds, %d missing from their validator's store%s", n, len(lost), orEmpty(": ", lost[:min(3, len(lost))]))}
}

// stops checks that a node stopped early only by the store fault, and that
// the store fault stopped its node with ErrStoreFailed.
func (r *run) stops() report.Check {
	var bad, seen []string
	f := r.cfg.Faults.Store
	for _, m := range r.members {
		expected := f != nil && m.info.Name == f.Node
		switch {
		case m.err != nil && expected && errors.Is(m.err, node.ErrStoreFailed):
			seen = append(seen, fmt.Sprintf("%s (%v)", m.info.Name, m.err))
		case m.err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", m.info.Name, m.err))
		case expected:
			bad = append(bad, m.info.Name+": ran on although its store's writes failed")
		}
	}
	detail := "no node stopped early"
	if len(seen) > 0 {
		detail = "stopped as injected: " + strings.Join(seen, ", ")
	}
	return report.Check{Name: "nodes stop only by injected store faults, with ErrStoreFailed", OK: len(bad) == 0,
		Detail: detail + orEmpty("; unexpected: ", bad)}
}

// downByFault says whether m was stopped for good by the store fault: the
// public auditor cannot reach it. r.mu not held.
func (r *run) downByFault(m *member) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m.down && m.err != nil
}
