package miner

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/protocol/pb"
)

// Hooks alter how a miner plays rounds. Only the testnet's
// adversaries set them.
type Hooks struct {
	// HoldRoots keeps roots back until a beacon is needed (burst).
	HoldRoots bool
	// Delay holds every root, the commitment and every ping reply back
	// this long (a miner faking distance).
	Delay time.Duration
	// HoldCommitment holds the commitment back this long after the last
	// root (a miner keeping its round open to skip the slots it holds).
	HoldCommitment time.Duration
	// HoldLastRoot holds a sized round's last step's root back this long
	// (a miner stretching its steps to skip the slots they hold; a
	// probe's steps, which no measurement bounds, are excused anyway).
	HoldLastRoot time.Duration
	// HoldHostOpening holds each host round's opening back this long (a
	// miner stretching its host sets to skip the slots they hold).
	HoldHostOpening time.Duration
	// Skip, if set and true for a round (host false) or host round from
	// validator, drops its stream unanswered (a miner that is up only
	// part of the time).
	Skip func(validator peer.ID, host bool) bool
	// HostProve, if set, replaces cpuwork.ProveUntil in CPU host rounds.
	HostProve func(p *cpuwork.Params, stop time.Time) (uint64, [][]byte, error)
	// HostWindow, if set, is the steps a chain the miner's simulated host
	// runs of a windowed CPU round before stop, and when they are done (the
	// testnet's simulated hosts, whose work takes no virtual time); 0 ends
	// the round unanswered.
	HostWindow func(p *cpuwork.Params, stop time.Time) (steps uint64, done time.Time)
	// RAMSource, if set, serves RAM host rounds instead of the dataset.
	RAMSource func(*memwalk.Dataset) memwalk.Source
	// PlotReader, if set, serves storage host rounds instead of the plot.
	PlotReader func(plot.Reader, *plot.Plot) plot.Reader
	// PongDelay, if set, makes the miner answer each ping this late, and
	// AlterAnnounce edits each of its announces before it is signed (the
	// memory-inflate adversary).
	PongDelay     time.Duration
	AlterAnnounce func(*pb.MinerAnnounce)
	// HoldLaterPongs, if set, makes the miner answer each pinging's first
	// ping at once and every later one this late: its round trip stays
	// short while its pings hold the round.
	HoldLaterPongs time.Duration
	// HostTime, if set, is how long a host proof of kind ("cpu", "ram",
	// "storage") and shape takes on the miner's host: its root is held
	// until then (the testnet's simulated hosts, whose work takes no
	// virtual time). A negative time ends the round unanswered.
	HostTime func(kind string, sh host.Shape) time.Duration
}
