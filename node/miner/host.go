package miner

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/round"
)

// handleHost answers a host round a validator opened: one at a time, from
// validators this node accepts challenges from, in their slots.
func (m *Miner) handleHost(st network.Stream) {
	from := st.Conn().RemotePeer()
	end := stream.End{S: st}
	defer end.Reset()
	if !m.Gossip.AcceptsChallenges(from) {
		m.Log.Warn("refusing a host round from a peer that is not a validator", "peer", from)
		return
	}
	if m.Hooks.Skip != nil && m.Hooks.Skip(from, true) {
		return // down (the intermittent adversary)
	}
	h := PlayedHostRound{Validator: from, At: time.Now()}
	if !m.hostTurn(from) {
		m.played.host(h, errors.New("refused: off schedule"))
		return
	}
	if !m.hostBusy.TryLock() {
		m.played.host(h, errors.New("refused: a host round is in play"))
		m.Log.Warn("refusing a host round: one is in play", "validator", from)
		return
	}
	defer m.hostBusy.Unlock()
	defer m.hostEnded(from)
	err := m.serveHost(st, &h)
	m.played.host(h, err)
	if err != nil {
		m.Log.Warn("host round not served", "validator", from, "err", err)
		return
	}
	end.Close()
}

// serveHost plays the miner's side of the host round on st
// (hostround.Miner) and notes its kind, shape and timing in h.
func (m *Miner) serveHost(st network.Stream, h *PlayedHostRound) error {
	st.SetDeadline(time.Now().Add(m.waitCap()))
	d := &hostDriver{m: m, st: st, r: bufio.NewReader(st), w: bufio.NewWriter(st), h: h,
		hm: hostround.NewMiner(hostround.MinerPlan{Miner: []byte(m.Host.ID()), Lag: round.OpeningLag,
			Admit: func(pr hostround.Proof) error { return plan.HostAdmissible(m.Config.Plan, pr) }})}
	raw, err := protocol.ReadFrame(d.r, hostround.MaxChallenge)
	if err != nil {
		return err
	}
	acts := d.hm.Step(hostround.Challenged{Frame: raw})
	if ch := d.hm.Challenge(); ch != nil {
		pr := ch.Proof
		h.Kind, h.Chains, h.Steps, h.RootBy = pr.Name(), pr.Dims().Chains, pr.Dims().Steps, time.Duration(ch.RootByMs)*time.Millisecond
	}
	return d.play(acts)
}

// hostDriver performs a hostround.Miner's actions on the host stream.
type hostDriver struct {
	m    *Miner
	st   network.Stream
	r    *bufio.Reader
	w    *bufio.Writer
	hm   *hostround.Miner
	h    *PlayedHostRound
	done proved // the proof, once run
}

// proved is a host proof run: its checkpoint states and leaves, and how
// to open them.
type proved struct {
	states [][]byte
	leaves []commit.CV
	open   hostOpen
}

// play performs acts and the actions the events they bring cause, until
// the machine says the round is served or not.
func (d *hostDriver) play(acts []any) error {
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		var ev any
		switch a := a.(type) {
		case hostround.Prove:
			ev = d.prove(a.Challenge)
		case hostround.SendRoot:
			ev = d.sendRoot(a.Root, a.Steps)
		case hostround.Open:
			if h := d.m.Hooks.HoldHostOpening; h > 0 {
				select {
				case <-time.After(h):
				case <-d.m.ctx.Done():
					return d.m.ctx.Err()
				}
			}
			b, err := d.done.open(d.done.states, d.done.leaves, a.Segments)
			if err == nil {
				err = stream.WriteFlush(d.w, b)
			}
			ev = hostround.Sent{Err: err}
		case hostround.Served:
			return a.Err
		}
		if ev != nil {
			acts = append(acts, d.hm.Step(ev)...)
		}
	}
	return errors.New("host round ended unserved") // every path ends in Served
}

// errNotHeld ends a host round the testnet's simulated host cannot answer:
// it does not hold what the round proves (Hooks.HostTime).
var errNotHeld = errors.New("host round not answered: the simulated host does not hold it")

// prove runs the challenge's proof, its root held until the testnet's
// simulated host would have finished it (Hooks.HostTime).
func (d *hostDriver) prove(ch *hostround.Challenge) hostround.Proved {
	pr := ch.Proof
	d.st.SetDeadline(time.Now().Add(time.Duration(ch.RootByMs)*time.Millisecond + stream.Deadline))
	start := time.Now()
	if c, ok := hostround.Windowed(pr); ok {
		return d.proveWindow(c, start)
	}
	states, open, err := d.m.proveHost(pr)
	if err != nil {
		return hostround.Proved{Err: err}
	}
	if d.m.Hooks.HostTime != nil {
		took := d.m.Hooks.HostTime(pr.Name(), pr.Dims())
		if took < 0 {
			return hostround.Proved{Err: errNotHeld}
		}
		t := time.NewTimer(time.Until(start.Add(took)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-d.m.ctx.Done():
			return hostround.Proved{Err: d.m.ctx.Err()}
		}
	}
	root, leaves, err := host.Commit(pr.Tag(), states)
	if err != nil {
		return hostround.Proved{Err: err}
	}
	d.h.Prove = time.Since(start)
	d.done = proved{states: states, leaves: leaves, open: open}
	return hostround.Proved{Root: root}
}

// WindowStop is how long before its run's end a windowed round stops its
// chains: the commitment's time, so that the root leaves by the run's end.
const WindowStop = 10 * time.Millisecond

// proveWindow runs a windowed CPU round (SPEC §23.2) until its run ends,
// or on the testnet's simulated host for the steps it runs by then
// (Hooks.HostWindow), and commits the proof as proven.
func (d *hostDriver) proveWindow(c hostround.CPUProof, start time.Time) hostround.Proved {
	stop := start.Add(c.Run() - WindowStop)
	n, states, err := d.m.proveUntil(c.Params, stop)
	if err != nil {
		return hostround.Proved{Err: err}
	}
	q, err := c.Proven(n)
	if err != nil {
		return hostround.Proved{Err: err}
	}
	root, leaves, err := host.Commit(q.Tag(), states)
	if err != nil {
		return hostround.Proved{Err: err}
	}
	d.h.Prove, d.h.Steps = time.Since(start), n
	d.done = proved{states: states, leaves: leaves, open: checkpointOpen(q.Shape)}
	return hostround.Proved{Root: root, Steps: n}
}

// proveUntil runs p's chains until stop: on this host's cores
// (cpuwork.ProveUntil, or Hooks.HostProve), or on the simulated one, whose
// steps take their time in virtual time (Hooks.HostWindow).
func (m *Miner) proveUntil(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error) {
	if m.Hooks.HostWindow == nil {
		if m.Hooks.HostProve != nil {
			return m.Hooks.HostProve(p, stop)
		}
		return cpuwork.ProveUntil(p, m.Config.Workers, stop)
	}
	n, done := m.Hooks.HostWindow(p, stop)
	if n == 0 {
		return 0, nil, errors.New("cpu round not answered: the simulated host ran no segment in its run")
	}
	q, err := p.Proven(n)
	if err != nil {
		return 0, nil, err
	}
	states, err := cpuwork.Prove(q, m.Config.Workers)
	if err != nil {
		return 0, nil, err
	}
	t := time.NewTimer(time.Until(done))
	defer t.Stop()
	select {
	case <-t.C:
		return n, states, nil
	case <-m.ctx.Done():
		return 0, nil, m.ctx.Err()
	}
}

// checkpointOpen opens a sample of a checkpointed proof of shape sh.
func checkpointOpen(sh host.Shape) hostOpen {
	return func(states [][]byte, leaves []commit.CV, segs []uint64) ([]byte, error) {
		op, err := host.Open(sh, states, leaves, segs)
		if err != nil {
			return nil, err
		}
		return op.MarshalBinary()
	}
}

// sendRoot sends the root and reads the secret the validator reveals as
// soon as the root arrives: the host lock waits for it hostround.RevealWait,
// not a proof fetch's timeout, so that a validator withholding it cannot
// hold the lock into the next owner's host slot. The opening is then
// written within the usual wait cap (a storage audit's is megabytes).
func (d *hostDriver) sendRoot(root commit.CV, steps uint64) any {
	_, windowed := hostround.Windowed(d.hm.Challenge().Proof)
	if err := stream.WriteFlush(d.w, hostround.RootFrame(root, windowed, steps)); err != nil {
		return hostround.Closed{Err: err}
	}
	d.st.SetReadDeadline(time.Now().Add(min(hostround.RevealWait, d.m.waitCap())))
	secret, err := protocol.ReadFrame(d.r, 32)
	d.st.SetDeadline(time.Now().Add(d.m.waitCap()))
	return hostround.Revealed{Frame: secret, Err: err}
}

// hostOpen encodes the opening of a sample from a proof's states and
// checkpoint leaves.
type hostOpen func(states [][]byte, leaves []commit.CV, segs []uint64) ([]byte, error)

// proveHost runs a host proof of fixed steps this miner can answer
// (hostround.Miner has checked its bounds): a RAM challenge of a RAM epoch in
// force over at most its dataset, a storage audit of its own plot.
func (m *Miner) proveHost(pr hostround.Proof) ([][]byte, hostOpen, error) {
	open := checkpointOpen(pr.Dims())
	workers := m.Config.Workers
	switch p := pr.(type) {
	case hostround.RAMProof:
		if m.ram == nil || p.Items > m.ram.items || !m.acceptsRAMEpoch(p.Epoch) {
			return nil, nil, errors.New("ram challenge for a dataset this miner does not hold")
		}
		d, _, err := m.ram.dataset(p.Epoch)
		if err != nil {
			return nil, nil, err
		}
		var src memwalk.Source = d
		if m.Hooks.RAMSource != nil {
			src = m.Hooks.RAMSource(d)
		}
		states, err := memwalk.Prove(p.Params, src, workers)
		return states, open, err
	case hostround.PlotProof:
		pl := m.Plot
		if pl == nil || string(p.Plot.Encode()) != string(pl.Params.Encode()) || p.Root != pl.Root {
			return nil, nil, errors.New("storage audit of a plot this miner does not hold")
		}
		r := pl.Reader
		if m.Hooks.PlotReader != nil {
			r = m.Hooks.PlotReader(r, &pl.Params)
		}
		states, err := plot.Prove(p.Audit, r, 0)
		return states, func(states [][]byte, leaves []commit.CV, segs []uint64) ([]byte, error) {
			op, err := plot.Open(p.Audit, r, pl.Leaves, states, leaves, segs)
			if err != nil {
				return nil, err
			}
			return op.MarshalBinary()
		}, err
	}
	return nil, nil, fmt.Errorf("host challenge of kind %d", pr.Kind())
}
