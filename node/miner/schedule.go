package miner

import (
	"bufio"
	"math/bits"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/round"
)

// Only a slot's owner challenges a miner, within the slot's opening window
// (SPEC.md §16); the miner refuses a round or host round off schedule
// before its queue or host lock, and a host set's kinds follow one another
// from the slot's opening.

// onSchedule says whether this miner serves a round (host: a host round)
// that validator opens now: from the owner of its slot (a host slot),
// within the slot's opening window. A refusal is counted and logged, at
// powers of two so a flood does not flood the log.
func (m *Miner) onSchedule(validator peer.ID, kind string) bool {
	now := time.Now()
	if kind == "host" && m.Gossip.HostOpens(validator, now) || kind != "host" && m.Gossip.SlotOpens(validator, len(m.GPUs) > 0, now) {
		return true
	}
	if c := m.Gossip.OffSchedule(validator); bits.OnesCount64(c) == 1 {
		m.Log.Warn("refusing a round off schedule: the validator does not own this slot's opening", "validator", validator, "kind", kind, "refused", c)
	}
	return false
}

// keepOffSchedule reads the challenge a listed validator sent on a round
// stream refused as off schedule at at, and keeps it as evidence against
// its signer. It takes no queue place; the read waits at most the
// opening lag, since a validator writes its challenge first.
func (m *Miner) keepOffSchedule(st network.Stream, from peer.ID, at time.Time) {
	if !m.Gossip.AcceptsChallenges(from) {
		return
	}
	st.SetReadDeadline(time.Now().Add(round.OpeningLag))
	f, err := protocol.ReadRoundFrame(bufio.NewReader(st))
	if err == nil && f.GetChallenge() != nil {
		err = m.Gossip.KeepOffSchedule(f.GetChallenge(), from, at)
	}
	if err != nil {
		m.Log.Debug("off-schedule challenge not kept", "validator", from, "err", err)
	}
}

// waitCap bounds each wait of a miner on a validator (the challenge, the
// reveal): stream.Deadline, and proof_timeout where that is shorter.
func (m *Miner) waitCap() time.Duration {
	return min(stream.Deadline, m.Config.ProofTimeout)
}

// resultWait bounds the miner's wait for a round's verdict after its
// commitment: the validator fetches the sample within proof_timeout and
// answers one trip later.
func (m *Miner) resultWait() time.Duration {
	return m.Config.ProofTimeout + round.OpeningLag
}

// hostChainMax is the longest run of host rounds a validator plays back to
// back: one set, one round of each kind.
const hostChainMax = hostround.KindPlot

// hostChain is the host rounds one validator is playing back to back.
type hostChain struct {
	validator peer.ID
	rounds    int
	ended     time.Time // the last one's end
}

// hostTurn says whether this miner serves a host round validator opens
// now. A validator plays a host set's kinds one after the other from its
// slot's opening: the first opens in the window, each next within
// round.OpeningLag of the previous one's end, at most hostChainMax in all.
func (m *Miner) hostTurn(validator peer.ID) bool {
	m.mu.Lock()
	c := m.hostChain
	m.mu.Unlock()
	next := c.validator == validator && c.rounds < hostChainMax && time.Since(c.ended) <= round.OpeningLag
	if !next && !m.onSchedule(validator, "host") {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if next {
		m.hostChain.rounds++
	} else {
		m.hostChain = hostChain{validator: validator, rounds: 1}
	}
	return true
}

// hostEnded notes the end of validator's host round, from which its next
// kind may follow.
func (m *Miner) hostEnded(validator peer.ID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hostChain.validator == validator {
		m.hostChain.ended = time.Now()
	}
}
