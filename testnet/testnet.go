// Package testnet runs a local pog network: validators and miners as real
// libp2p nodes on 127.0.0.1, each with its own home and Pebble store, miners
// on simulated hardware profiles (the CPU backend paced to a profile's
// throughput, the GPU inventory announced through the NVML fake), and
// adversaries of every class beside honest miners. It checks its own
// expectations and writes a report (testnet/report).
//
// This package orchestrates a run: which node plays what, starting them
// (in process or as child processes), collecting their events, and
// summarising and checking the result. What it runs them on lives in its
// subpackages: the simulated machines (machine), the networks and their
// faults (netlab), the adversaries and their gains (adversary), the node
// and scoring configuration scaled to them (scaled); the child processes
// of --procs (procs) and the public auditor (auditor) serve it; fault
// exploration (explore) and the report (report) sit on top.
package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/auditor"
	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/procs"
	"github.com/pog-network/pog/testnet/report"
	"github.com/pog-network/pog/testnet/scaled"
)

// Adversaries lists every adversary class, in the order they join.
// far is no adversary but an honest miner behind FarDelay; like them it
// joins by name.
var Adversaries = []string{"lazy", "precision", "replay", "sybil", "forger", "overclaim", "slow", "burst", "distant", "intermittent", "host-overclaim", "cpu-on-gpu", "ram-on-disk", "storage-regen", "sparse-plot", "spammer", "dishonest-validator", "equivocator", "far", "loaded", "timeshare", "absent", "squatter", "memory-inflate", "gpu-overannounce", "beacon-split", "cpu-outsource", "ram-rebuild", "swarm"}

// Config describes a testnet run.
type Config struct {
	Validators int
	Miners     int // honest miners; adversaries join beside them
	// Profiles names the honest miners' profiles in turn (default: all of
	// Profiles, fastest first).
	Profiles    []string
	Epochs      int // full epochs to run after the first partial one
	EpochLength time.Duration
	Seed        int64
	Out         string   // report directory; node homes go in Out/nodes
	Adversaries []string // classes from Adversaries
	// Scale maps a profile's TFLOPS to the paced CPU backend's: small
	// enough that a 2-core machine delivers every miner's simulated rate.
	Scale float64
	// Procs runs every node (a sybil pair shares one) as its own OS process:
	// Exe testnet-node --spec FILE, reporting events as JSON lines.
	Procs bool
	Exe   string // the pog binary for --procs; default os.Executable()
	// Netns (with Procs, root only) puts each process in its own network
	// namespace behind a veth pair, with NetemDelay and NetemLoss applied
	// by tc netem. Partition then cuts half the honest miners off for two
	// rounds in the first full epoch, and a check requires them to be
	// verified again afterwards.
	Netns      bool
	NetemDelay time.Duration
	NetemLoss  float64 // percent
	Partition  bool
	// Delays adds latency, each way, to every stream and gossip message of
	// a miner, by node name (miner-2, far) or by profile (H100); a name
	// wins over a profile. The far miner defaults to FarDelay.
	Delays map[string]time.Duration
	// RoundInterval, if set, replaces the local profile's 2 s between a
	// validator's rounds: the current protocol's only duty-cycle knob.
	RoundInterval time.Duration
	// DutyCycle, if set, replaces the testnet's validator.duty_cycle: with
	// SlotSchedule the share of each miner's slots under some validator's
	// round (default 0.95), else each validator's share of a miner's time,
	// at random (default 0.1).
	DutyCycle float64
	// SlotSchedule lists the validators in every node's network.validators,
	// so they take turns at each miner in slots (SPEC.md §16), as on a
	// network with a validator set (the default). Off, they pause at
	// random, which suits short epochs of a few slots, but does not bound
	// time-sharing.
	SlotSchedule bool
	// ChainedRoundChecks enforces the distance and time-sharing bounds (far within 3 % of its
	// profile and never penalised; timeshare ≤ 1.1×) without SlotSchedule;
	// off, the figures are reported and the checks are not enforced. With
	// SlotSchedule both are always judged, the time-sharing gain against
	// the schedule's bound at DutyCycle (1.1× from about 0.91).
	ChainedRoundChecks bool
	// HostMaxRound, if set, replaces the testnet's cap on how long a
	// distant miner's host rounds grow (validator.host_max_round; the
	// production default is 10 s, the simulation's 1 s, a tenth as its
	// round target is, and 1 ms on the wall clock), and without the slot
	// schedule each validator plays one host set per epoch instead of
	// three.
	HostMaxRound time.Duration
	// Swarm is how many identities the swarm adversary announces
	// (0: adversary.SwarmIdentities). The default run's is proportionate
	// to its validators' admission (64 each): enough to exceed it 8×,
	// without the cost of thousands of hosts' keys in a run of all
	// adversaries.
	Swarm int
	// Sim runs every node on a simulated network (simnet QUIC links) with
	// stores in memory. The caller runs Run inside a synctest bubble, so
	// time is virtual: simulated devices take exactly their profile's
	// time, whatever the machine's load (RunSim).
	Sim bool
	// Faults, with Sim, are injected into the simulated network, a node's
	// life and a store (netlab.Faults; faults.go does the node and store).
	Faults   netlab.Faults
	Log      *slog.Logger
	Progress io.Writer // one line per event worth watching; nil: quiet
	// ProductionTiming (with Sim) runs every timing setting at
	// production's (scaled.Params.ProductionTiming): see ProductionTiming.
	ProductionTiming bool
	// HeapProfile, if set, is where the heap profile is written once the
	// last epoch's records are in, before the network stops: what a
	// network of this size holds. Until then each heartbeat (a quarter
	// epoch in virtual time) writes it.
	HeapProfile string
}

// DefaultConfig is `make testnet`: 2 validators, 6 miners, 3 epochs of
// 40 s, under the slot schedule (SPEC.md §16), which bounds time-sharing:
// validators take turns at each miner in 1.25 s slots, 95 % of them owned.
// Epochs that long give each of the four listed validators about eight
// slots per miner. Without the schedule (small networks of short epochs),
// each validator pauses at random for a duty cycle of 0.1.
func DefaultConfig() Config {
	return Config{Validators: 2, Miners: 6, Epochs: 3, EpochLength: 40 * time.Second, Seed: 1, Out: "testnet-out", Scale: 4.6e-7,
		SlotSchedule: true, Swarm: 512}
}

// ProductionTiming is c in virtual time with production's timing settings:
// rounds of production's 10 s target in 12.5 s slots, so epochs ten times
// DefaultConfig's (400 s) give each validator and miner as many rounds as
// DefaultConfig's do. The devices run at about a third of DefaultConfig's
// scale: a round's 64 steps of production then do about three times the
// real work of its 22, and the CPU profile's least step (the simulated
// matrices' smallest shape) still fits 64 in its 2 s round.
func ProductionTiming(c Config) Config {
	c.Sim, c.ProductionTiming = true, true
	c.EpochLength = 10 * c.EpochLength
	c.Scale = 1.5e-7
	return c
}

// ParseAdversaries reads "all", "" or a comma-separated list.
func ParseAdversaries(s string) ([]string, error) {
	switch s {
	case "":
		return nil, nil
	case "all":
		return append([]string(nil), Adversaries...), nil
	}
	var out []string
	for _, a := range strings.Split(s, ",") {
		if !slices.Contains(Adversaries, a) {
			return nil, fmt.Errorf("unknown adversary %q (known: %s, or all)", a, strings.Join(Adversaries, ", "))
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// member is one node of the testnet.
type member struct {
	info  report.Node
	id    peer.ID
	node  *node.Node // nil with --procs: it runs in a child process
	store *store.Store
	home  string
	key   crypto.PrivKey
	addr  string // --procs: the multiaddr it listens on, with /p2p
	// bootstrap is what it dials: its bootstrap peers, or for a delayed
	// miner the delay proxies in front of them.
	bootstrap []string
	cfg       config.Config      // what it was started with, for a restart
	spec      minerSpec          //
	halt      context.CancelFunc // stops its node (crash fault)
	done      chan struct{}      // closed when its node has stopped
	down      bool               // stopped by a fault (r.mu)
	err       error              // why its node stopped early, if it did (r.mu)
}

// run is the state of one testnet run.
type run struct {
	cfg       Config
	absence   *adversary.Absence // the absent adversary's windows; nil without it
	start     time.Time
	wallStart time.Duration // wallNow at the start
	up        time.Duration // since start: every node started and connected
	members   []*member
	byID      map[peer.ID]*member
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu          sync.Mutex
	rounds      []report.Round
	detections  []report.Detection
	sent        map[[32]byte]time.Time              // challenge ID → publication (validators)
	received    map[receipt]time.Time               // a challenge's gossip arrival at each other validator
	have        map[uint64]map[[2]peer.ID]time.Time // epoch → (node, validator) pairs → when it first stored the record
	done        map[uint64]bool                     // epochs reported on epochsDone
	scoreSeen   map[peer.ID]bool                    // attackers already scored below zero
	attackers   map[peer.ID]string                  // attacker host → adversary class
	swarm       map[peer.ID]bool                    // the swarm's identities (swarm.go)
	swarmRounds int                                 // records validators stored of them
	stopping    bool                                // shutting down: round streams break as nodes stop
	epochsDone  chan uint64
	children    []*procs.Child     // --procs
	childFailed chan error         // --procs: a child's failure while running
	sim         *netlab.Sim        // Sim
	lab         *netlab.Namespaces // --netns
	cut         []int              // --netns: lab hosts of the partitioned miners
	cutNames    []string
	cutFrom     time.Duration // partition window, since start
	cutTo       time.Duration
	late        *lateJoin // set once the late joiner's deadline passed
	roundsEnd   time.Time // validators start no round from then on (stopRounds)
	// validatorIDs is every validator's peer ID, listed in every node's
	// network.validators.
	validatorIDs []string
	// audits are the public audits by validator name (peeraudit.go).
	audits map[string]auditor.Result
	// squatted is the public audit of the squatter's victim, with the
	// squatter (squatter.go).
	squatted *auditor.Result
	split    *beaconSplit // with the beacon-split validator: what it watches
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "[%5.1fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
	}
}

// Run starts the network, runs cfg.Epochs full epochs, stops it, checks the
// run's expectations and writes the report. The summary's Passed says
// whether every check held; an error means the run itself broke.
func Run(ctx context.Context, cfg Config) (*report.Summary, error) {
	r, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()
	start := r.startNodes
	if cfg.Procs {
		start = r.startProcs
	}
	if err := start(ctx); err != nil {
		r.stop()
		return nil, err
	}
	r.up = time.Since(r.start)
	first := epochAt(time.Now(), cfg.EpochLength)
	r.startDisruptions(ctx, first)
	r.progress("%d nodes up; epochs of %v; waiting for %d full epochs after epoch %d", len(r.members), cfg.EpochLength, cfg.Epochs, first)
	if w := r.thinSlots(); w != "" {
		r.progress("warning: %s", w)
	}
	last := first + uint64(cfg.Epochs)
	r.stopRounds(epochStart(last+1, cfg.EpochLength))
	if err := r.waitEpochs(ctx, last); err != nil {
		r.stop()
		return nil, err
	}
	if err := writeHeapProfile(cfg.HeapProfile); err != nil {
		r.progress("warning: heap profile: %v", err)
	}
	r.peerAudits(ctx)
	r.stop()
	for _, c := range r.children {
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	s, err := r.summarise(first+1, last)
	if err != nil {
		return nil, err
	}
	if cfg.Out != "" {
		if _, err := report.Write(cfg.Out, s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// stopRounds has every validator start no round from two of the longest
// slots after end, the last epoch's end: its last slots' windows pass and
// are recorded, and the wait for that epoch's records and the audits run
// no rounds that no check judges. Validators restarted later get it in
// startNode.
func (r *run) stopRounds(end time.Time) {
	c := r.nodeConfig().Validator
	at := end.Add(2 * round.SlotFor(max(c.RoundTarget.Duration, c.RoundTargetCPU.Duration)))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roundsEnd = at
	for _, m := range r.members {
		if m.node != nil && m.info.Role == string(node.RoleValidator) {
			m.node.StopRoundsAt(at)
		}
	}
}

// thinSlots warns of epochs too short for the validator set (SPEC §16,
// "Validators per miner"): under the slot schedule a validator weighs a
// miner from the rounds of its own slots, and consensus is each miner's
// stake-weighted median, so with under about three rounds per validator
// and miner many miners are weighed by under half the stake and earn
// nothing. Empty if the epochs hold enough.
func (r *run) thinSlots() string {
	v := len(r.validatorIDs)
	if !r.cfg.SlotSchedule || v < 2 {
		return ""
	}
	c := r.nodeConfig().Validator
	per := c.DutyCycle * (1 - c.HostSlotShare) / (float64(round.SlotFor(c.RoundTarget.Duration)) * float64(v))
	if rounds := per * float64(r.cfg.EpochLength); rounds < 3 {
		return fmt.Sprintf("epochs of %v hold about %.1f rounds per validator and miner among %d validators: miners weighed by under half the stake earn nothing; --epoch-length %v holds five",
			r.cfg.EpochLength, rounds, v, time.Duration(5/per).Round(time.Second))
	}
	return ""
}

// newRun checks cfg and sets up the run's state (and its simulated
// network with cfg.Sim).
func newRun(cfg Config) (*run, error) {
	if cfg.Validators < 1 || cfg.Miners < 1 || cfg.Epochs < 1 || cfg.EpochLength < time.Second || cfg.Scale <= 0 || cfg.RoundInterval < 0 {
		return nil, errors.New("testnet: need at least 1 validator, 1 miner, 1 epoch, a 1s epoch length, a positive scale and round interval")
	}
	if cfg.Faults.Any() && !cfg.Sim {
		return nil, errors.New("testnet: faults are injected in virtual time only (Sim)")
	}
	if cfg.Log == nil {
		cfg.Log = nopLogger()
	}
	r := &run{cfg: cfg, start: time.Now(), wallStart: wallNow(), byID: map[peer.ID]*member{}, sent: map[[32]byte]time.Time{},
		received: map[receipt]time.Time{}, have: map[uint64]map[[2]peer.ID]time.Time{}, done: map[uint64]bool{}, scoreSeen: map[peer.ID]bool{},
		attackers: map[peer.ID]string{}, epochsDone: make(chan uint64, 64)}
	if containsStr(cfg.Adversaries, "beacon-split") {
		r.split = &beaconSplit{seen: map[string]time.Time{}, refused: map[string]int{}}
	}
	if err := r.checkDelays(); err != nil {
		return nil, err
	}
	if cfg.Sim {
		r.sim = netlab.NewSim()
		r.sim.WithFaults(cfg.Faults, r.start, cfg.Seed)
		netlab.SeedLibraries(cfg.Seed)
	}
	return r, nil
}

// startDisruptions starts what happens to the network once it is up, from
// epoch first on: the partition (--netns --partition), the crash fault and
// the late joiner.
func (r *run) startDisruptions(ctx context.Context, first uint64) {
	cfg := r.cfg
	if cfg.Partition && r.lab != nil && len(r.cut) > 0 {
		r.wg.Add(1)
		go r.partition(ctx, first+1)
	}
	if c := cfg.Faults.Crash; c != nil {
		r.wg.Add(1)
		go r.crashRestart(ctx, *c)
	}
	if f := cfg.Faults; f.Any() {
		r.progress("faults: %v", f)
	}
	if r.split != nil {
		r.wg.Add(1)
		go r.watchSeedRefusals(ctx)
	}
	if !cfg.Procs && cfg.Epochs >= 3 {
		// Two full epochs late, so one epoch remains to catch up in.
		r.wg.Add(1)
		go r.lateJoiner(ctx, first+3)
	}
}

// waitEpochs waits until epoch last is done, printing each epoch's line.
// Normally every node soon holds every validator's record of the last
// epoch. Gossip is best-effort: if some never arrive, it stops one epoch
// later and lets the summary report which nodes lack records.
func (r *run) waitEpochs(ctx context.Context, last uint64) error {
	end := time.Unix(0, int64(last+1)*int64(r.cfg.EpochLength))
	grace := time.NewTimer(time.Until(end.Add(r.cfg.EpochLength)) + 10*time.Second)
	defer grace.Stop()
	// In virtual time an epoch can take many minutes of wall time: a
	// heartbeat four times an epoch shows the run advancing.
	var beat <-chan time.Time
	if r.cfg.Sim {
		t := time.NewTicker(r.cfg.EpochLength / 4)
		defer t.Stop()
		beat = t.C
	}
	for {
		select {
		case <-beat:
			r.heartbeat(end)
		case e := <-r.epochsDone:
			r.progress("%s", r.epochLine(e))
			if e >= last {
				return nil
			}
		case err := <-r.childFailed:
			return err
		case <-grace.C:
			r.mu.Lock()
			got := len(r.have[last])
			r.mu.Unlock()
			r.progress("epoch %d: only %d of %d record deliveries arrived; stopping (lacking: %s)", last, got, r.expected(), r.lacking(last))
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// heartbeat says how far the run is from end, and writes the heap
// profile, if one is asked for, so that a run that is killed (a large
// one, by the kernel, for memory) leaves its last heartbeat's.
func (r *run) heartbeat(end time.Time) {
	wall := (wallNow() - r.wallStart).Round(time.Second)
	if left := time.Until(end).Round(time.Second); left > 0 {
		r.progress("running: %v of virtual time to the last epoch's end, %v of wall time so far", left, wall)
	} else {
		r.progress("running: the last epoch ended %v ago; waiting for its records, %v of wall time so far", -left, wall)
	}
	if err := writeHeapProfile(r.cfg.HeapProfile); err != nil {
		r.progress("warning: heap profile: %v", err)
	}
}

// expected is how many epoch-record deliveries complete an epoch: every
// node stores every validator's record.
func (r *run) expected() int {
	nodes, validators := 0, 0
	for _, m := range r.members {
		if m.down {
			continue // stopped by a fault: it records nothing
		}
		switch m.info.Role {
		case "validator":
			validators++
			nodes++
		case "miner", observerRole:
			nodes++
		}
	}
	return nodes * validators
}

// lacking says, for each validator whose record of epoch e some running
// node has not stored, at how many nodes.
func (r *run) lacking(e uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, v := range r.members {
		if v.info.Role != "validator" || v.down {
			continue
		}
		n := 0
		for _, m := range r.members {
			if _, ok := r.have[e][[2]peer.ID{m.id, v.id}]; !ok && !m.down && (m.info.Role == "validator" || m.info.Role == "miner" || m.info.Role == observerRole) {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s's at %d nodes", v.info.Name, n))
		}
	}
	return strings.Join(out, ", ")
}

func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func epochAt(t time.Time, l time.Duration) uint64 { return uint64(t.UnixNano() / int64(l)) }

// params is what the run's node and scoring configurations are scaled
// from.
func (r *run) params() scaled.Params {
	c := r.cfg
	return scaled.Params{EpochLength: c.EpochLength, Epochs: c.Epochs, Validators: r.validatorIDs, RoundInterval: c.RoundInterval,
		SlotSchedule: c.SlotSchedule, DutyCycle: c.DutyCycle, HostMaxRound: c.HostMaxRound, Scale: c.Scale, Sim: c.Sim,
		RAMPeriodEpochs: r.ramPeriodEpochs(), Miners: c.Miners, ProductionTiming: c.ProductionTiming}
}

func (r *run) nodeConfig() config.Config { return r.params().Node() }

func (r *run) scoringConfig() scoring.Config { return r.params().Scoring() }
