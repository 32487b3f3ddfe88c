package miner

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/round"
)

import ()

// handleHost answers a host round a validator opened: one at a time, from
// validators this node accepts challenges from, for this miner's ID, at
// most hostround.MaxWork steps.
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

// serveHost answers the round on st and notes its kind, shape and timing
// in h.
func (m *Miner) serveHost(st network.Stream, h *PlayedHostRound) error {
	st.SetDeadline(time.Now().Add(m.waitCap()))
	r, w := bufio.NewReader(st), bufio.NewWriter(st)
	raw, err := protocol.ReadFrame(r, hostround.MaxChallenge)
	if err != nil {
		return err
	}
	ch, err := hostround.DecodeChallenge(raw)
	if err != nil {
		return err
	}
	pr := ch.Proof
	h.Kind, h.Chains, h.Steps, h.RootBy = pr.Name(), pr.Dims().Chains, pr.Dims().Steps, time.Duration(ch.RootByMs)*time.Millisecond
	if peer.ID(pr.MinerID()) != m.Host.ID() {
		return errors.New("host challenge for another miner")
	}
	if bound := hostround.RootBy(pr, round.OpeningLag); h.RootBy > bound {
		return fmt.Errorf("host challenge with its root due after %v: a plan allows at most %v", h.RootBy, bound)
	}
	st.SetDeadline(time.Now().Add(h.RootBy + stream.Deadline))
	start := time.Now()
	states, open, err := m.proveHost(pr)
	if err != nil {
		return err
	}
	if m.Hooks.HostTime != nil {
		t := time.NewTimer(time.Until(start.Add(m.Hooks.HostTime(pr.Name(), pr.Dims()))))
		defer t.Stop()
		select {
		case <-t.C:
		case <-m.ctx.Done():
			return m.ctx.Err()
		}
	}
	root, leaves, err := host.Commit(pr.Tag(), states)
	if err != nil {
		return err
	}
	h.Prove = time.Since(start)
	if err := stream.WriteFlush(w, root[:]); err != nil {
		return err
	}
	// The validator reveals as the root arrives; the host lock waits no
	// longer than a proof fetch may take.
	st.SetDeadline(time.Now().Add(m.waitCap()))
	secret, err := protocol.ReadFrame(r, 32)
	if err != nil {
		return fmt.Errorf("sampling secret: %w", err)
	}
	if len(secret) != 32 || sample.Commit([32]byte(secret)) != ch.Commitment {
		return errors.New("the revealed secret does not match its commitment")
	}
	b, err := open(states, leaves, ch.Segments([32]byte(secret), root))
	if err != nil {
		return err
	}
	return stream.WriteFlush(w, b)
}

// hostOpen encodes the opening of a sample from a proof's states and
// checkpoint leaves.
type hostOpen func(states [][]byte, leaves []commit.CV, segs []uint64) ([]byte, error)

// proveHost runs a host proof this miner can answer: any CPU challenge of
// at most hostround.MaxWork steps, a RAM challenge of a RAM epoch in force over
// at most its dataset, a storage audit of its own plot.
func (m *Miner) proveHost(pr hostround.Proof) ([][]byte, hostOpen, error) {
	sh := pr.Dims()
	if sh.Chains*sh.Steps > hostround.MaxWork || sh.Steps > hostround.MaxWork {
		return nil, nil, fmt.Errorf("host challenge of %d×%d steps: at most %d", sh.Chains, sh.Steps, hostround.MaxWork)
	}
	open := func(states [][]byte, leaves []commit.CV, segs []uint64) ([]byte, error) {
		op, err := host.Open(sh, states, leaves, segs)
		if err != nil {
			return nil, err
		}
		return op.MarshalBinary()
	}
	workers := m.Config.Workers
	switch p := pr.(type) {
	case hostround.CPUProof:
		prove := func(p *cpuwork.Params) ([][]byte, error) { return cpuwork.Prove(p, workers) }
		if m.Hooks.HostProve != nil {
			prove = m.Hooks.HostProve
		}
		states, err := prove(p.Params)
		return states, open, err
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
		if sh.Chains*sh.Steps > hostround.MaxPlotWork {
			return nil, nil, fmt.Errorf("storage audit of %d×%d steps: at most %d", sh.Chains, sh.Steps, hostround.MaxPlotWork)
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
