package testnet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/netlab"
	"github.com/pog-network/pog/testnet/procs"
)

// startProcs prepares every home here and runs each node in a child
// process; attackers stay in this process.
func (r *run) startProcs(ctx context.Context) error {
	exe := r.cfg.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(r.cfg.Out, 0o755); err != nil {
		return err
	}
	if err := r.createValidatorKeys(); err != nil {
		return err
	}
	if r.cfg.Netns {
		lab, err := netlab.NewNamespaces()
		if err != nil {
			return err
		}
		r.lab = lab
	}
	groups, specs := r.childGroups()
	validators, nss, err := r.prepareGroups(groups, specs)
	if err != nil {
		return err
	}
	r.childFailed = make(chan error, len(groups))
	for i, g := range groups {
		if err := r.startChild(exe, i, g, nss[i]); err != nil {
			return err
		}
	}
	if err := r.awaitChildren(ctx); err != nil {
		return err
	}
	return r.startAttackers(ctx, validators, func(ctx context.Context, h host.Host, v *member) error {
		return procs.Connect(ctx, h, v.addr)
	})
}

// childGroups are the child processes to run, each its members:
// validators first, so every miner can bootstrap from all of them, then a
// process per miner, the sybil pair's and the timeshare group's last. It
// returns the miners' specs by name too.
func (r *run) childGroups() ([][]procs.Member, map[string]minerSpec) {
	var groups [][]procs.Member
	nv := r.cfg.Validators
	for i := 0; i < nv; i++ {
		groups = append(groups, []procs.Member{{Name: fmt.Sprintf("validator-%d", i+1), Role: "validator", Offset: i}})
	}
	for i, a := range r.extraValidators() {
		groups = append(groups, []procs.Member{{Name: validatorName(a), Role: "validator", Adversary: a, Offset: nv + i}})
	}
	var sybil, shared []procs.Member
	specs := map[string]minerSpec{}
	for _, s := range r.minerSpecs() {
		specs[s.name] = s
		cm := procs.Member{Name: s.name, Role: "miner", Profile: s.profile, Adversary: s.adversary, Mode: s.mode,
			Announce: s.announce, Extra: s.extra, Sybil: s.share != nil, Delay: s.delay,
			Hold: s.hooks.HoldRoots, RootDelay: s.hooks.Delay}
		switch {
		case cm.Sybil:
			sybil = append(sybil, cm)
		case s.device != nil:
			cm.Device = s.adversary
			shared = append(shared, cm)
		default:
			groups = append(groups, []procs.Member{cm})
		}
	}
	for _, g := range [][]procs.Member{sybil, shared} {
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups, specs
}

// prepareGroups prepares every member's home, each group on its own lab
// host with --netns, and notes half the honest miners as the ones a
// partition cuts off. It returns the validators and each group's
// namespace.
func (r *run) prepareGroups(groups [][]procs.Member, specs map[string]minerSpec) ([]*member, []string, error) {
	var vaddrs []string
	var validators []*member
	nss := make([]string, len(groups))
	honestMiners := 0
	for gi, g := range groups {
		host := "127.0.0.1"
		if r.lab != nil {
			ns, addr, err := r.lab.Host(gi, r.cfg.NetemDelay, r.cfg.NetemLoss)
			if err != nil {
				return nil, nil, err
			}
			nss[gi], host = ns, addr
		}
		for j, cm := range g {
			listen := ""
			if r.lab != nil {
				listen = fmt.Sprintf("/ip4/%s/tcp/%d", host, 4001+j)
			}
			if cm.Role == "validator" {
				m, _, err := r.prepareHome(cm.Name, node.RoleValidator, minerSpec{adversary: cm.Adversary, offset: cm.Offset}, append([]string(nil), vaddrs...), listen)
				if err != nil {
					return nil, nil, err
				}
				vaddrs = append(vaddrs, m.addr)
				validators = append(validators, m)
				continue
			}
			if _, _, err := r.prepareHome(cm.Name, node.RoleMiner, specs[cm.Name], vaddrs, listen); err != nil {
				return nil, nil, err
			}
			if cm.Adversary == "" {
				if honestMiners%2 == 0 {
					r.cut = append(r.cut, gi)
					r.cutNames = append(r.cutNames, cm.Name)
				}
				honestMiners++
			}
		}
	}
	return validators, nss, nil
}

// startChild writes group i's spec and starts its process (in namespace
// ns with --netns), passing its events to the run until it exits.
func (r *run) startChild(exe string, i int, g []procs.Member, ns string) error {
	spec := procs.Spec{Out: r.cfg.Out, Scale: r.cfg.Scale, EpochLength: r.cfg.EpochLength, Validators: r.cfg.Validators,
		Adversaries: r.cfg.Adversaries, Members: g}
	c, err := procs.Start(exe, filepath.Join(r.cfg.Out, "nodes", fmt.Sprintf("child-%d.json", i)), ns, spec, r)
	if err != nil {
		return err
	}
	r.children = append(r.children, c)
	go func() {
		<-c.Exited()
		if err := c.Err(); err != nil {
			r.childFailed <- err
		}
	}()
	return nil
}

// childStartLimit bounds how long the children may take to start their
// nodes: on a loaded machine a child takes seconds, not minutes.
const childStartLimit = 2 * time.Minute

// awaitChildren waits until every child has started its nodes, so that
// the run's epochs are counted from a network that is up, however loaded
// the machine.
func (r *run) awaitChildren(ctx context.Context) error {
	limit := time.NewTimer(childStartLimit)
	defer limit.Stop()
	began := time.Now()
	for i, c := range r.children {
		select {
		case <-c.Ready():
		case <-c.Exited():
			return c.Err()
		case <-limit.C:
			return fmt.Errorf("testnet: child %d has not started its nodes after %v; its log is in %s", i, childStartLimit, filepath.Join(r.cfg.Out, "nodes"))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.progress("%d child processes started their nodes in %v", len(r.children), time.Since(began).Round(time.Millisecond))
	return nil
}

// stopChildren asks every child to stop and waits for it, then opens the
// homes' stores for the summary.
func (r *run) stopChildren() {
	for _, c := range r.children {
		c.Terminate()
	}
	for _, c := range r.children {
		c.Wait(30 * time.Second)
	}
	if r.lab != nil {
		r.lab.Close()
	}
	for _, m := range r.members {
		if m.home != "" && m.store == nil {
			if st, err := store.Open(filepath.Join(m.home, config.StoreDir), store.Options{}); err == nil {
				m.store = st
			}
		}
	}
}

// RunChild runs the nodes a --procs parent described in specPath until ctx
// ends, writing events to w and its nodes' warnings and errors to logw.
func RunChild(ctx context.Context, specPath string, w, logw io.Writer) error {
	spec, err := procs.ReadSpec(specPath)
	if err != nil {
		return err
	}
	cfg := DefaultConfig()
	cfg.Out, cfg.Scale, cfg.EpochLength, cfg.Validators, cfg.Adversaries = spec.Out, spec.Scale, spec.EpochLength, spec.Validators, spec.Adversaries
	cfg.Log = slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := &run{cfg: cfg, start: time.Now(), byID: map[peer.ID]*member{}}
	em := procs.NewEmitter(w)
	var share *adversary.SybilShare
	devices := map[string]*adversary.Device{}
	for _, cm := range spec.Members {
		home := filepath.Join(spec.Out, "nodes", cm.Name)
		key, err := config.LoadKey(home)
		if err != nil {
			return err
		}
		ncfg, err := config.LoadConfig(home)
		if err != nil {
			return err
		}
		id, _ := peer.IDFromPrivateKey(key)
		m := &member{home: home, key: key, id: id}
		m.info.Name, m.info.Role, m.info.Adversary = cm.Name, cm.Role, cm.Adversary
		ms := minerSpec{name: cm.Name, profile: cm.Profile, adversary: cm.Adversary, mode: cm.Mode, announce: cm.Announce, extra: cm.Extra,
			offset: cm.Offset, delay: cm.Delay, hooks: miner.Hooks{HoldRoots: cm.Hold, Delay: cm.RootDelay}}
		if cm.Device != "" {
			if devices[cm.Device] == nil {
				devices[cm.Device] = adversary.NewSharedDevice(machine.ByName(cm.Profile).FP16TFLOPS * spec.Scale)
			}
			ms.device = devices[cm.Device]
		}
		if cm.Sybil {
			if share == nil {
				share = adversary.NewSybilShare()
			}
			ms.share = share
		}
		if err := r.startNode(ctx, m, ncfg, ms, em); err != nil {
			return err
		}
		r.members = append(r.members, m)
	}
	em.Ready()
	<-ctx.Done()
	r.wg.Wait()
	for _, m := range r.members {
		m.store.Close()
	}
	return nil
}

// partition cuts the chosen miners' links two seconds into epoch e for about
// two rounds, then restores them.
func (r *run) partition(ctx context.Context, e uint64) {
	defer r.wg.Done()
	at := time.Unix(0, int64(e)*int64(r.cfg.EpochLength)).Add(2 * time.Second)
	hold := 2 * r.nodeConfig().Validator.RoundTarget.Duration // about two rounds
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(at)):
	}
	r.mu.Lock()
	r.cutFrom = time.Since(r.start)
	r.mu.Unlock()
	for _, h := range r.cut {
		r.lab.Cut(h, true)
	}
	r.progress("partition: validators cut off from %v", r.cutNames)
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	for _, h := range r.cut {
		r.lab.Cut(h, false)
	}
	r.mu.Lock()
	r.cutTo = time.Since(r.start)
	r.mu.Unlock()
	r.progress("partition healed")
}
