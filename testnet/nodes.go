package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/procs"
	"github.com/pog-network/pog/testnet/report"
	"lukechampine.com/blake3"
)

// minerSpec is one miner to start.
type minerSpec struct {
	name, profile, adversary string
	announce                 string // GPU profile announced, if not its own
	mode                     string // adversary.Backend mode
	extra                    time.Duration
	hooks                    miner.Hooks // burst, distant
	share                    *adversary.SybilShare
	offset                   int               // validators: position in the round stagger
	delay                    time.Duration     // added to every message, each way
	device                   *adversary.Device // shared device time (timeshare); nil: its own
	// hostShare is how many identities split this miner's one host
	// (timeshare): each holds that share of its RAM and storage. 0: its own.
	hostShare int
	load      *adversary.Load // a CPU job beside it (loaded); nil: none
	// cpu answers its CPU host rounds (cpu-outsource); nil: its own host.
	cpu *adversary.CPUServer
	// ram holds its whole RAM dataset, or another identity's
	// (ram-rebuild); nil: its own host.
	ram *adversary.RAMHost
}

func (r *run) minerSpecs() []minerSpec {
	var out []minerSpec
	names := r.cfg.Profiles
	if len(names) == 0 {
		for _, p := range machine.Profiles {
			names = append(names, p.Name)
		}
	}
	for i := 0; i < r.cfg.Miners; i++ {
		out = append(out, minerSpec{name: fmt.Sprintf("miner-%d", i+1), profile: machine.ByName(names[i%len(names)]).Name})
	}
	// far and timeshare take miner-1's profile, so an undelayed honest
	// miner of the same profile is there to compare with.
	first := machine.ByName(names[0])
	for _, a := range r.cfg.Adversaries {
		switch a {
		case "far":
			out = append(out, minerSpec{name: "far", profile: first.Name})
		case "squatter":
			out = append(out, minerSpec{name: victimName, profile: first.Name})
		case "dishonest-validator":
			// An honest device the dishonest validator weighs alone:
			// its gain is the validator's (SkewWeights).
			out = append(out, minerSpec{name: accompliceName, profile: first.Name, adversary: accompliceName})
		case "absent":
			if r.cfg.Sim && r.cfg.SlotSchedule {
				out = append(out, minerSpec{name: "absent", profile: "H100", adversary: a})
			}
		case "loaded":
			if r.cfg.Sim {
				out = append(out, minerSpec{name: "loaded", profile: first.Name, load: &adversary.Load{Seed: uint64(r.cfg.Seed), Length: r.cfg.EpochLength}})
			}
		case "timeshare":
			dev := adversary.NewSharedDevice(first.FP16TFLOPS * r.cfg.Scale).InVirtualTime(r.cfg.Sim)
			for i := 1; i <= adversary.TimeshareIdentities; i++ {
				out = append(out, minerSpec{name: fmt.Sprintf("timeshare-%d", i), profile: first.Name, adversary: a, device: dev,
					hostShare: adversary.TimeshareIdentities})
			}
		case "cpu-outsource":
			out = append(out, r.cpuOutsourceSpecs(first)...)
		case "ram-rebuild":
			out = append(out, r.ramRebuildSpecs(first)...)
		case "lazy":
			out = append(out, minerSpec{name: "lazy", profile: "H100", adversary: a, mode: "lazy"})
		case "precision":
			out = append(out, minerSpec{name: "precision", profile: "A100", adversary: a, mode: "precision"})
		case "replay":
			out = append(out, minerSpec{name: "replay", profile: "A100", adversary: a, mode: "replay"})
		case "sybil":
			sh := adversary.NewSybilShare()
			out = append(out, minerSpec{name: "sybil-a", profile: "RTX4090", adversary: a, share: sh},
				minerSpec{name: "sybil-b", profile: "RTX4090", adversary: a, mode: "sybil-follower", share: sh})
		case "overclaim":
			out = append(out, minerSpec{name: "overclaim", profile: "RTX4090", announce: "H200", adversary: a})
		case "slow":
			h100 := machine.ByName("H100")
			// Outsourcing adds 1.5× the H100 compute time: measured
			// throughput falls below half the class figure.
			base := time.Duration(2 * 256 * 256 * 256 / (h100.FP16TFLOPS * r.cfg.Scale * 1e12) * float64(time.Second))
			out = append(out, minerSpec{name: "slow", profile: "H100", adversary: a, extra: base * 3 / 2})
		case "burst":
			// Real speed, roots held back and sent in bursts.
			out = append(out, minerSpec{name: "burst", profile: "H100", adversary: a, hooks: miner.Hooks{HoldRoots: true}})
		case "memory-inflate", "gpu-overannounce":
			// Real speed; set up by name in startNode (announceAdversary).
			spec := minerSpec{name: a, profile: "H100", adversary: a}
			if a == "gpu-overannounce" {
				spec.hooks.HoldRoots = true
			}
			out = append(out, spec)
		case "distant":
			// Real speed, 200 ms of faked latency on roots and pongs.
			out = append(out, minerSpec{name: "distant", profile: "H100", adversary: a, hooks: miner.Hooks{Delay: distantDelay}})
		case "intermittent", "host-overclaim", "cpu-on-gpu", "ram-on-disk", "storage-regen", "sparse-plot":
			// Set up by adversary name in startNode, so --procs children
			// get them too.
			out = append(out, minerSpec{name: a, profile: "H100", adversary: a})
		}
	}
	for i := range out {
		out[i].delay = r.delayFor(out[i].name, out[i].profile)
	}
	return out
}

// missedKind marks a detection that is a missed round: evidence of
// absence, not of a fault, so an honest miner's is no false positive.
const missedKind = "missed-round"

// distantDelay is the latency the distant adversary fakes.
const distantDelay = 200 * time.Millisecond

func (r *run) startNodes(ctx context.Context) error {
	if err := os.MkdirAll(r.cfg.Out, 0o755); err != nil {
		return err
	}
	if err := r.createValidatorKeys(); err != nil {
		return err
	}
	var validators []*member
	for i := 0; i < r.cfg.Validators; i++ {
		m, err := r.newMember(ctx, fmt.Sprintf("validator-%d", i+1), node.RoleValidator, minerSpec{offset: i}, nil)
		if err != nil {
			return err
		}
		validators = append(validators, m)
	}
	for i, a := range r.extraValidators() {
		m, err := r.newMember(ctx, validatorName(a), node.RoleValidator, minerSpec{adversary: a, offset: r.cfg.Validators + i}, nil)
		if err != nil {
			return err
		}
		validators = append(validators, m)
	}
	var mesh []dial
	for i, v := range validators {
		for _, w := range validators[:i] {
			mesh = append(mesh, dial{v, w.node.Addrs()})
		}
	}
	if err := dialAll(ctx, mesh); err != nil {
		return err
	}
	var vaddrs []string
	for _, v := range validators {
		vaddrs = append(vaddrs, v.node.Addrs()...)
	}
	var dials []dial
	for _, spec := range r.minerSpecs() {
		m, err := r.newMember(ctx, spec.name, node.RoleMiner, spec, vaddrs)
		if err != nil {
			return err
		}
		if spec.adversary == "absent" {
			if err := r.startAbsence(ctx, m, validators); err != nil {
				return err
			}
			continue
		}
		if spec.delay > 0 && r.sim == nil {
			// Its bootstrap loop dials through the delay proxies, three
			// round trips a peer: no need to hold up the other nodes.
			continue
		}
		for _, a := range m.bootstrap {
			dials = append(dials, dial{m, []string{a}})
		}
	}
	if err := dialAll(ctx, dials); err != nil {
		return err
	}
	return r.startAttackers(ctx, validators, func(ctx context.Context, h host.Host, v *member) error {
		return h.Connect(ctx, peer.AddrInfo{ID: v.node.Host().ID(), Addrs: v.node.Host().Addrs()})
	})
}

// dial is a member's connection to a peer at addrs.
type dial struct {
	from  *member
	addrs []string
}

// dialAll makes every connection at once: one after another, a thousand
// miners' dials to 16 validators took 32 s of virtual time, in which the
// first miners' rounds ran while the last were still starting.
func dialAll(ctx context.Context, dials []dial) error {
	return atOnce(len(dials), func(i int) error { return dials[i].from.node.Connect(ctx, dials[i].addrs...) })
}

// atOnce runs f(0) … f(n−1) at once and joins their errors.
func atOnce(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startAttackers runs the spammer, the forger and the swarm in this
// process, each connected to every validator.
func (r *run) startAttackers(ctx context.Context, validators []*member, connect func(context.Context, host.Host, *member) error) error {
	for _, a := range r.cfg.Adversaries {
		if a == "swarm" {
			if err := r.startSwarm(ctx, validators, connect); err != nil {
				return err
			}
			continue
		}
		if a != "spammer" && a != "forger" {
			continue
		}
		att, err := adversary.NewAttacker(ctx, r.attackerTransport(), r.keyStream("attacker/"+a))
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.attackers[att.Host.ID()] = a
		r.members = append(r.members, &member{info: report.Node{Name: a, PeerID: att.Host.ID().String(), Role: "attacker", Adversary: a}})
		r.mu.Unlock()
		if err := atOnce(len(validators), func(i int) error { return connect(ctx, att.Host, validators[i]) }); err != nil {
			return err
		}
		victim := validators[0].key.GetPublic()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer att.Host.Close()
			if a == "spammer" {
				att.Spam(ctx, 500*time.Millisecond)
			} else {
				att.Forge(ctx, victim, 500*time.Millisecond)
			}
		}()
	}
	return nil
}

// attackerTransport puts an attacker on loopback TCP, or on the simulated
// network.
func (r *run) attackerTransport() []libp2p.Option {
	if r.sim == nil {
		return []libp2p.Option{libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0")}
	}
	listen, t := r.sim.Endpoint("attacker", 0)
	return append(t, libp2p.ListenAddrStrings(listen))
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// newMember creates a node's home (key, config, Pebble store) under
// Out/nodes and starts it in this process.
func (r *run) newMember(ctx context.Context, name string, role node.Role, spec minerSpec, bootstrap []string) (*member, error) {
	m, cfg, err := r.prepareHome(name, role, spec, bootstrap, "")
	if err != nil {
		return nil, err
	}
	m.cfg, m.spec = cfg, spec // a crash fault restarts it from them
	if err := r.startNode(ctx, m, cfg, spec, r); err != nil {
		return nil, err
	}
	return m, nil
}

// createHome makes an empty home with the key the run's seed gives the
// node of that name: the same seed, the same peer IDs.
func (r *run) createHome(home string) (crypto.PrivKey, error) {
	if err := os.RemoveAll(home); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	return config.CreateKeyFrom(home, r.keyStream(filepath.Base(home)))
}

// keyStream is the random stream the run's seed gives the node or
// attacker of that name: its key first.
func (r *run) keyStream(name string) io.Reader {
	h := blake3.New(32, nil)
	fmt.Fprintf(h, "pog testnet key\x00%d\x00%s", r.cfg.Seed, name)
	return h.XOF()
}

// createValidatorKeys makes every validator's home and key before any
// config is written, so that with the slot schedule every config lists
// the whole validator set (network.validators).
func (r *run) createValidatorKeys() error {
	names := []string{}
	for i := 0; i < r.cfg.Validators; i++ {
		names = append(names, fmt.Sprintf("validator-%d", i+1))
	}
	for _, a := range r.extraValidators() {
		names = append(names, validatorName(a))
	}
	r.validatorIDs = nil
	for _, name := range names {
		key, err := r.createHome(filepath.Join(r.cfg.Out, "nodes", name))
		if err != nil {
			return err
		}
		if id, _ := peer.IDFromPrivateKey(key); r.cfg.SlotSchedule {
			r.validatorIDs = append(r.validatorIDs, id.String())
		}
	}
	return nil
}

// prepareHome writes a node's key and config; bootstrap peers, if any, go
// into the config.
func (r *run) prepareHome(name string, role node.Role, spec minerSpec, bootstrap []string, listen string) (*member, config.Config, error) {
	home := filepath.Join(r.cfg.Out, "nodes", name)
	cfg := r.nodeConfig()
	var key crypto.PrivKey
	var err error
	if role == node.RoleValidator {
		key, err = config.LoadKey(home) // createValidatorKeys made it
	} else {
		key, err = r.createHome(home)
	}
	if err != nil {
		return nil, cfg, err
	}
	if role == node.RoleValidator {
		n := r.cfg.Validators + len(r.extraValidators())
		cfg.Validator.RoundOffset = config.Duration{Duration: cfg.Validator.RoundInterval.Duration * time.Duration(spec.offset) / time.Duration(n)}
	}
	if role == node.RoleMiner && machine.ByName(spec.profile).GPU == "" {
		cfg.Miner.MaxOutputBytes = 64 << 10 // a CPU miner takes the smallest challenges
	}
	cfg.Node.Bootstrap = bootstrap
	switch {
	case listen != "":
		cfg.Node.Listen = []string{listen}
	case r.cfg.Procs:
		port, err := freePort()
		if err != nil {
			return nil, cfg, err
		}
		cfg.Node.Listen = []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)}
	}
	if err := config.WriteConfig(home, cfg, "testnet"); err != nil {
		return nil, cfg, err
	}
	id, _ := peer.IDFromPrivateKey(key)
	m := &member{home: home, key: key, id: id,
		info: report.Node{Name: name, PeerID: id.String(), Role: string(role), Adversary: spec.adversary}}
	if role == node.RoleMiner {
		p := machine.ByName(spec.profile)
		m.info.Profile, m.info.ProfileTFLOPS, m.info.SimTFLOPS = p.Name, p.FP16TFLOPS, p.FP16TFLOPS*r.cfg.Scale
		m.info.AddedLatencyMs = float64(spec.delay) / float64(time.Millisecond)
		m.info.Loaded = spec.load != nil
	}
	if len(cfg.Node.Listen) == 1 && r.cfg.Procs {
		m.addr = cfg.Node.Listen[0] + "/p2p/" + id.String()
	}
	r.mu.Lock()
	r.members = append(r.members, m)
	r.byID[id] = m
	r.mu.Unlock()
	return m, cfg, nil
}

// events receives what a node reports: in process the run itself, in a
// child process (--procs) a writer of JSON lines the parent reads.
type events interface {
	Round(validator string, rec *store.RoundRecord)
	Gossip(self peer.ID, topic string, o *protocol.Opened, at time.Time)
	EpochRecord(e uint64, node, validator peer.ID)
	Scores(s map[peer.ID]float64)
}

// startNode opens m's store and runs its node until ctx ends.
func (r *run) startNode(ctx context.Context, m *member, cfg config.Config, spec minerSpec, ev events) error {
	dd := &netlab.DelayedDialer{}
	transport, storeOpts, err := r.nodeNetwork(m, &cfg, spec, dd)
	if err != nil {
		dd.Close()
		return err
	}
	m.bootstrap = cfg.Node.Bootstrap
	st, err := store.Open(filepath.Join(m.home, config.StoreDir), storeOpts)
	if err != nil {
		dd.Close()
		return err
	}
	m.store = st
	name, id := m.info.Name, m.id
	sc := r.scoringConfig()
	role := node.Role(m.info.Role)
	var plotFile io.Closer = io.NopCloser(nil)
	o := node.Options{Config: cfg, Role: role, Key: m.key, Store: st, Scoring: &sc, Transport: transport, Stakes: r.stakes(),
		Logger:        r.cfg.Log.With("name", name),
		OnEpochRecord: func(e uint64, v peer.ID) { ev.EpochRecord(e, id, v) },
		OnGossip:      func(topic string, o *protocol.Opened, at time.Time) { ev.Gossip(id, topic, o, at) },
	}
	switch role {
	case node.RoleValidator:
		r.validatorOptions(&o, name, spec, ev)
	case node.RoleMiner:
		if plotFile, err = r.minerOptions(&o, m, spec); err != nil {
			st.Close()
			dd.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	// Its own context: a crash fault stops it as the run's end does, by
	// cancelling what Run runs under, so that Run alone calls Close.
	ctx, m.halt = context.WithCancel(ctx)
	n, err := node.New(ctx, o)
	if err != nil {
		m.halt()
		st.Close()
		dd.Close()
		plotFile.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	r.mu.Lock()
	m.node = n
	if role == node.RoleValidator && !r.roundsEnd.IsZero() {
		n.StopRoundsAt(r.roundsEnd) // restarted after Run set it
	}
	r.mu.Unlock()
	done := make(chan struct{})
	m.done = done
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		defer dd.Close()
		defer plotFile.Close()
		r.nodeStopped(m, n.Run(ctx))
	}()
	return nil
}

// nodeNetwork puts m on the run's network: on the simulated one its
// transport (the absent miner's behind its gater) and an in-memory store;
// on loopback a delayed miner reaches its bootstrap peers through delay
// proxies (dd) and listens on nothing, so that every message it sends or
// receives is delayed.
func (r *run) nodeNetwork(m *member, cfg *config.Config, spec minerSpec, dd *netlab.DelayedDialer) ([]libp2p.Option, store.Options, error) {
	storeOpts := store.Options{}
	if r.sim != nil {
		// Simulated links carry the delay; the store lives in memory.
		listen, transport := r.sim.Endpoint(m.info.Name, spec.delay)
		if spec.adversary == "absent" {
			r.absence = adversary.NewAbsence(*cfg, m.id, r.stakes())
			transport = append(transport, libp2p.ConnectionGater(r.absence.Gater()))
		}
		cfg.Node.Listen = []string{listen}
		storeOpts.FS = r.storeFaultFS(m, r.sim.StoreFS(filepath.Join(m.home, config.StoreDir)))
		return transport, storeOpts, nil
	}
	if spec.delay > 0 {
		boot, err := dd.Rewrite(cfg.Node.Bootstrap, spec.delay)
		if err != nil {
			return nil, storeOpts, fmt.Errorf("%s: %w", m.info.Name, err)
		}
		// No listener: no peer can reach it but through a proxy it dialled.
		cfg.Node.Bootstrap, cfg.Node.Listen = boot, nil
	}
	return nil, storeOpts, nil
}

// validatorOptions reports validator name's rounds and scores to ev, and
// plays spec's adversary, if any.
func (r *run) validatorOptions(o *node.Options, name string, spec minerSpec, ev events) {
	o.OnRecord = func(rec *store.RoundRecord) { ev.Round(name, rec) }
	o.OnScores = ev.Scores
	if r.cfg.Sim {
		o.CheckCPU = machine.CheckCPU()
	}
	switch spec.adversary {
	case "dishonest-validator":
		o.Adversary.AlterEpochRecord = func(rec *pb.EpochRecord) { adversary.SkewWeights(rec, r.accomplice()) }
	case "equivocator":
		o.Adversary.EquivocateEpochRecord = adversary.Equivocate
	case "squatter":
		o.Adversary.Squat = r.squatVictims
	case "beacon-split":
		o.Adversary.EquivocateEpochRecord = adversary.SplitBeacon(beaconSplitPeriod)
	}
}

// minerOptions gives miner m its simulated device, the GPUs and host it
// announces, its host (dataset and plot, returned to close) and what
// spec's adversary bends.
func (r *run) minerOptions(o *node.Options, m *member, spec minerSpec) (io.Closer, error) {
	p := machine.ByName(spec.profile)
	dev := spec.device
	if dev == nil {
		dev = adversary.NewOwnDevice(p.FP16TFLOPS * r.cfg.Scale).InVirtualTime(r.cfg.Sim)
		if p.GPU == "" {
			dev.Load = spec.load // the job shares a CPU miner's device
		}
	}
	o.Backend = &adversary.Backend{Device: dev, Extra: spec.extra, Mode: spec.mode, Share: spec.share}
	shown := p
	if spec.announce != "" {
		shown = machine.ByName(spec.announce)
	}
	o.Hardware, o.GPUs = shown.Host, machine.AnnouncedGPUs(shown.GPU, shown.MemoryMB)
	o.Adversary.Miner = spec.hooks
	adversary.Announce(o, spec.adversary, r.cfg.EpochLength)
	if spec.hostShare > 1 {
		// One host split between identities: each announces the
		// share it holds (its cores are time-shared, and announced
		// figures earn nothing anyway).
		p.Host = machine.ScaledHost(p.Host, 1/float64(spec.hostShare))
		o.Hardware = machine.ScaledHost(shown.Host, 1/float64(spec.hostShare))
		if spec.ram != nil { // each holds the host's whole dataset, in turn
			p.Host.RamBytes, o.Hardware.RamBytes = shown.Host.RamBytes, shown.Host.RamBytes
		}
	}
	plotFile, err := machine.AttachHost(o, m.home, m.id, p, spec.adversary, o.Logger)
	if err != nil {
		return nil, err
	}
	if r.sim != nil {
		o.Adversary.Miner.HostTime = adversary.HostTime(p.Host, spec.adversary, spec.load)
		if spec.ram != nil {
			o.Adversary.Miner.HostTime = spec.ram.HostTime(spec.name, o.Adversary.Miner.HostTime)
		}
		o.Adversary.Miner.HostWindow = adversary.HostWindow(p.Host, spec.adversary, spec.load)
		if spec.cpu != nil {
			o.Adversary.Miner.HostWindow = spec.cpu.HostWindow(spec.name)
			o.Hardware.CpuCores = shown.Host.CpuCores // each claims the server's cores
		}
		if spec.adversary == "storage-regen" || spec.adversary == "sparse-plot" {
			o.Adversary.Miner.PlotReader = nil // its reads take adversary.RegenBlockNs or SparsePlotNs
		}
	}
	switch spec.adversary {
	case "host-overclaim":
		o.Hardware = machine.ScaledHost(shown.Host, 4) // honest GPU, 4× its host
	case "cpu-on-gpu":
		o.Adversary.Miner.HostProve = adversary.GPUHostProve
	case "intermittent":
		o.Adversary.Miner.Skip = adversary.Intermittent()
	}
	return plotFile, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Round, Gossip, EpochRecord and Scores take what the nodes in this
// process report (events); RoundEvent, Received, EpochRecord and Scores
// what child processes do (procs.Sink).
func (r *run) Round(validator string, rec *store.RoundRecord) {
	r.RoundEvent(procs.RoundOf(validator, rec))
}

func (r *run) RoundEvent(e procs.Round) {
	now := time.Since(r.start).Seconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.swarm[mustPeer(e.Miner)] {
		r.swarmRounds++ // counted, not listed: thousands of no-shows
		return
	}
	m := r.byID[mustPeer(e.Miner)]
	name := e.Miner
	if m != nil {
		name = m.info.Name
	}
	rec := struct {
		Epoch, Round uint64
		Reason       string
	}{e.Epoch, e.Round, e.Reason}
	round := report.Round{Epoch: e.Epoch, Round: e.Round, Validator: e.Validator, Miner: name,
		Verified: e.Verified, Reason: e.Reason, TFLOPS: e.TFLOPS, VerifyMS: float64(e.Verify) / 1e6, AtSeconds: now}
	r.rounds = append(r.rounds, round)
	if len(e.Challenge) == 32 {
		r.sent[[32]byte(e.Challenge)] = time.Unix(0, e.Sent)
	}
	// A round cut short by the run's own shutdown (its miner stopped
	// first) accuses nobody.
	if !round.Verified && m != nil && !(r.stopping && m.info.Adversary == "") {
		kind := "failed-round"
		if e.Missed {
			kind = missedKind
		}
		d := report.Detection{Adversary: m.info.Adversary, Node: name, Epoch: rec.Epoch, Round: rec.Round,
			Kind: kind, Detail: rec.Reason, AtSeconds: now}
		r.detections = append(r.detections, d) // the console summarises them per epoch (epochLine)
	}
}

func (r *run) Gossip(self peer.ID, topic string, o *protocol.Opened, at time.Time) {
	if topic == protocol.TopicChallenge && o.Author != self {
		r.Received(protocol.ID(o.Body), self, at)
	}
}

// receipt is a challenge's arrival at one node.
type receipt struct {
	id   [32]byte
	node peer.ID
}

func (r *run) Received(id [32]byte, node peer.ID, at time.Time) {
	r.mu.Lock()
	if _, ok := r.received[receipt{id, node}]; !ok {
		r.received[receipt{id, node}] = at
	}
	r.mu.Unlock()
}

func (r *run) Scores(s map[peer.ID]float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, class := range r.attackers {
		if v, ok := s[p]; ok && v < 0 && !r.scoreSeen[p] {
			r.scoreSeen[p] = true
			now := time.Now()
			r.detections = append(r.detections, report.Detection{Adversary: class, Node: class,
				Epoch: epochAt(now, r.cfg.EpochLength), Kind: "peer-score",
				Detail: fmt.Sprintf("gossip score %.0f after rejected messages", v), AtSeconds: now.Sub(r.start).Seconds()})
			r.progress("%s: peer score fell to %.0f", class, v)
		}
	}
}

// EpochRecord counts the (node, validator) pairs with a stored record of
// e, each once; an epoch is done when every node holds every validator's
// record.
func (r *run) EpochRecord(e uint64, node, validator peer.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.have[e] == nil {
		r.have[e] = map[[2]peer.ID]time.Time{}
	}
	if _, ok := r.have[e][[2]peer.ID{node, validator}]; !ok {
		r.have[e][[2]peer.ID{node, validator}] = time.Now()
	}
	// Once per epoch: the late joiner's records of earlier epochs, and
	// (node, validator) pairs beyond the expected ones, come after.
	if len(r.have[e]) >= r.expected() && !r.done[e] {
		r.done[e] = true
		select {
		case r.epochsDone <- e:
		default:
		}
	}
}

// arrival names validator's record of epoch e as node stored it, with
// when, in seconds of the run (unknown in a --procs run).
func (r *run) arrival(e uint64, node, validator peer.ID) string {
	r.mu.Lock()
	at, ok := r.have[e][[2]peer.ID{node, validator}]
	r.mu.Unlock()
	name := r.nameOf(validator.String()) + "'s record"
	if !ok {
		return name
	}
	return fmt.Sprintf("%s (stored at %.1f s)", name, at.Sub(r.start).Seconds())
}

// recordSeconds is, by validator name, when the first and the last node
// stored its record of epoch e, in seconds of the run.
func (r *run) recordSeconds(e uint64) map[string][2]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][2]float64{}
	for pair, at := range r.have[e] {
		name, s := r.nameOf(pair[1].String()), at.Sub(r.start).Seconds()
		span, ok := out[name]
		if !ok {
			span = [2]float64{s, s}
		}
		out[name] = [2]float64{min(span[0], s), max(span[1], s)}
	}
	return out
}

// stop ends every node and attacker; stores stay open (or, with
// --procs, are opened) for the summary.
func (r *run) stop() {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.cancel()
	r.stopChildren()
	r.wg.Wait()
	if r.sim != nil {
		r.sim.Close()
		// Stream handlers outlive their hosts until they return: let the
		// ones still waiting out simulated work (a host proof, a slow
		// pong) finish, in virtual time, before the bubble ends.
		time.Sleep(time.Minute)
	}
}

func (r *run) closeStores() {
	for _, m := range r.members {
		if m.store != nil {
			m.store.Close()
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
