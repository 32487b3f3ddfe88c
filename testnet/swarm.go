package testnet

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/report"
)

// swarmName is the one name the report gives all the swarm's identities.
const swarmName = "swarm"

// startSwarm runs the swarm (adversary.Swarm) in this process, its hosts
// connected to every validator.
func (r *run) startSwarm(ctx context.Context, validators []*member, connect func(context.Context, host.Host, *member) error) error {
	n := r.cfg.Swarm
	if n <= 0 {
		n = adversary.SwarmIdentities
	}
	sw, err := adversary.NewSwarm(ctx, n, uint64(r.cfg.Seed), r.swarmTransport)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.swarm = map[peer.ID]bool{}
	for _, id := range sw.IDs() {
		r.swarm[id] = true
	}
	for _, h := range sw.Hosts() {
		r.attackers[h.ID()] = swarmName
	}
	r.members = append(r.members, &member{info: report.Node{Name: swarmName, Role: "attacker", Adversary: swarmName}})
	r.mu.Unlock()
	for _, h := range sw.Hosts() {
		for _, v := range validators {
			if err := connect(ctx, h, v); err != nil {
				sw.Close()
				return err
			}
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer sw.Close()
		sw.Announce(ctx, r.cfg.EpochLength)
	}()
	return nil
}

// swarmTransport puts swarm host i on loopback TCP, or on the simulated
// network.
func (r *run) swarmTransport(i int) []libp2p.Option {
	if r.sim == nil {
		return []libp2p.Option{libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0")}
	}
	listen, t := r.sim.Endpoint(fmt.Sprintf("swarm-%d", i), 0)
	return append(t, libp2p.ListenAddrStrings(listen))
}

// swarmCheck: with the swarm announcing, every honest validator's record
// of every summarised epoch verified (each node holds it), every node
// computed the same consensus, the swarm earned nothing, and its no-shows
// stayed within admission's bound: each validator records at most one
// per slot of each of the max_miners miners it admits. Whether honest
// miners' rounds are intact needs a run without it to compare with
// (TestSwarmLeavesHonestIntact).
func (r *run) swarmCheck(s *report.Summary) report.Check {
	ok, bad := true, ""
	c := r.params().Node().Validator
	slot := c.RoundTarget.Duration + c.RoundTarget.Duration/4
	bound := len(r.validatorIDs) * c.MaxMiners * int(time.Duration(s.DurationSeconds*float64(time.Second))/slot+1)
	for _, ep := range s.Epochs {
		for _, n := range s.Nodes {
			if n.Role == "validator" && n.Adversary == "" && ep.Weights[n.Name] == nil {
				ok, bad = false, fmt.Sprintf("; no record of %s for epoch %d", n.Name, ep.Epoch)
			}
		}
		if !ep.Identical || ep.Incentive[swarmName] > 0 {
			ok, bad = false, fmt.Sprintf("; epoch %d: consensus identical %v, swarm incentive %g", ep.Epoch, ep.Identical, ep.Incentive[swarmName])
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.swarmRounds > bound {
		ok, bad = false, fmt.Sprintf("; more no-shows than admission allows (%d)", bound)
	}
	return check("adversary swarm leaves records and consensus intact and earns nothing", ok,
		"%d identities; %d no-show records of them stored by validators in the run%s", len(r.swarm), r.swarmRounds, bad)
}
