package adversary

import (
	"context"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/round"
)

// The absent adversary reads the public slot schedule and is connected to
// each validator only for that validator's first owned slot of each epoch
// past absentFrom of it: every other owned slot it skips. Without no-show
// records it showed availability 1 and its real speed in every part, for
// one round's work per validator and epoch; it is owed that share of an
// honest peer (its presence). Its gossip goes through the miners, to
// which it stays connected. Only a simulated run plays it.
const absentFrom = 8 // the first 1/absentFrom of each epoch is skipped

// Absence is the absent miner's schedule: the one the validators follow.
type Absence struct {
	sched      round.Schedule
	validators []peer.ID // in the schedule's order
	self       []byte
	epoch      time.Duration
}

// NewAbsence builds the validators' schedule as the nodes do: the
// validators of network.validators with stake (stakes; nil: one each).
func NewAbsence(cfg config.Config, self peer.ID, stakes map[string]float64) *Absence {
	a := &Absence{self: []byte(self), epoch: cfg.Network.EpochLength.Duration}
	a.sched, _ = validator.ScheduleOf(stakes, cfg.Network.Validators, cfg.Validator.DutyCycle, cfg.Validator)
	a.sched.Slot = round.SlotFor(cfg.Validator.RoundTarget.Duration)
	for _, v := range a.sched.Validators {
		a.validators = append(a.validators, peer.ID(v))
	}
	return a
}

// slot is validator i's chosen slot in epoch e, and whether it has one.
func (a *Absence) slot(i int, e uint64) (uint64, bool) {
	from := a.sched.SlotAt(time.Unix(0, int64(e)*int64(a.epoch)+int64(a.epoch/absentFrom)))
	j, ok := a.sched.Next(a.self, i, from, 1<<16)
	return j, ok && a.sched.Start(j).Before(time.Unix(0, int64(e+1)*int64(a.epoch)))
}

// open says whether the miner is connected to validator p at t: from a
// second before its chosen slot to the slot's end.
func (a *Absence) open(p peer.ID, t time.Time) bool {
	i := slices.Index(a.validators, p)
	if i < 0 {
		return true
	}
	j, ok := a.slot(i, uint64(t.UnixNano()/int64(a.epoch)))
	return ok && !t.Before(a.sched.Start(j).Add(-time.Second)) && t.Before(a.sched.Start(j+1))
}

// Presence is the share of the miner's owned slots in epochs [from, to]
// it is connected for.
func (a *Absence) Presence(from, to uint64) float64 {
	owned, present := 0, 0
	for e := from; e <= to; e++ {
		start := time.Unix(0, int64(e)*int64(a.epoch))
		for j := a.sched.SlotAt(start); a.sched.Start(j).Before(start.Add(a.epoch)); j++ {
			if a.sched.Owner(a.self, j) >= 0 {
				owned++
			}
		}
		for i := range a.validators {
			if _, ok := a.slot(i, e); ok {
				present++
			}
		}
	}
	return float64(present) / float64(max(owned, 1))
}

// Keep connects n to each validator in its window and cuts it outside,
// every tick, until ctx ends; addrs are the validators' addresses.
func (a *Absence) Keep(ctx context.Context, n *node.Node, addrs map[peer.ID][]string) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		for _, v := range a.validators {
			connected := n.Host().Network().Connectedness(v) == network.Connected
			switch open := a.open(v, time.Now()); {
			case open && !connected:
				n.Connect(ctx, addrs[v]...) // a failure is retried next tick
			case !open && connected:
				n.Host().Network().ClosePeer(v)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Gater refuses connections with validators outside the miner's windows,
// so that no one else's dial reconnects it.
func (a *Absence) Gater() connmgr.ConnectionGater { return &absenceGater{a} }

type absenceGater struct{ a *Absence }

func (g *absenceGater) InterceptPeerDial(p peer.ID) bool { return g.a.open(p, time.Now()) }
func (g *absenceGater) InterceptAddrDial(peer.ID, ma.Multiaddr) bool {
	return true
}
func (g *absenceGater) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g *absenceGater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.a.open(p, time.Now())
}
func (g *absenceGater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}
