package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/hw"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/node/miner"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

func init() {
	commands["init"] = command{"create a node home: identity key and config file", runInit}
	commands["id"] = command{"print the node's peer ID", runID}
	commands["run"] = command{"run a miner or validator node until SIGINT/SIGTERM", runNode}
	commands["rounds"] = command{"list the round verdicts a validator has stored", runRounds}
}

// parseFlags parses args, mapping -h to exit 0 and other errors to 2.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	fs.Usage = func() { printFlags(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	if err := checkFlagRanges(fs); err != nil {
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		return 2, false
	}
	return 0, true
}

func homeFlag(fs *flag.FlagSet) *string {
	return fs.String("home", defaultHome(), "node home directory (key, config.toml, store); $"+config.EnvHome+" sets the default")
}

// defaultHome is $POG_HOME, else ~/.pog, else empty (no home directory
// known: --home is then required).
func defaultHome() string {
	if h := os.Getenv(config.EnvHome); h != "" {
		return h
	}
	if u, err := os.UserHomeDir(); err == nil {
		return filepath.Join(u, ".pog")
	}
	return ""
}

func needHome(stderr io.Writer, name, home string) int {
	if home == "" {
		fmt.Fprintf(stderr, "pog %s: --home is required (no $%s and no home directory)\n", name, config.EnvHome)
		return 2
	}
	return 0
}

func runInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	profile := fs.String("profile", "default", "configuration profile: default (a real network) or local (small, fast rounds on 127.0.0.1); a network file may name one")
	network := fs.String("network", "", "join this network: a network file, or NAME for NAME.toml in "+strings.Join(config.NetworkSearchPath, " or ")+
		" (sets bootstrap peers, validators and genesis)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := needHome(stderr, "init", *home); code != 0 {
		return code
	}
	cfg, net, err := initConfig(profile, *network, flagSet(fs, "profile"))
	if err != nil {
		fmt.Fprintf(stderr, "pog init: %v\n", err)
		return 2
	}
	if err := os.MkdirAll(*home, 0o700); err != nil {
		fmt.Fprintf(stderr, "pog init: %v\n", err)
		return 1
	}
	if _, err := os.Stat(filepath.Join(*home, config.KeyFile)); err == nil {
		fmt.Fprintf(stderr, "pog init: %s already holds a node (key %s); refusing to overwrite\n", *home, config.KeyFile)
		return 1
	}
	key, err := config.CreateKey(*home)
	var id peer.ID
	if err == nil {
		id, _ = peer.IDFromPrivateKey(key)
		cfg.Node.PeerID = id.String() // LoadKey checks the key against it
	}
	if err == nil && net != nil {
		err = net.WriteGenesis(*home)
	}
	if err == nil {
		err = config.WriteConfig(*home, cfg, *profile)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pog init: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "peer ID  %s\nkey      %s (mode 0600)\nconfig   %s (profile %s)\n", id,
		filepath.Join(*home, config.KeyFile), filepath.Join(*home, config.ConfigFile), *profile)
	if net != nil {
		fmt.Fprintf(stdout, "network  %s: %d validators, %d bootstrap peers, genesis %s\n", net.Name, len(net.Validators),
			len(net.Bootstrap), filepath.Join(*home, config.GenesisFile))
	}
	return 0
}

// initConfig is the config pog init writes: the profile's defaults with
// the network file's settings, if one is named. A network file's profile
// replaces the default unless --profile was given.
func initConfig(profile *string, network string, profileGiven bool) (config.Config, *config.Network, error) {
	var net *config.Network
	if network != "" {
		path, err := config.FindNetwork(network)
		if err == nil {
			net, err = config.ReadNetwork(path)
		}
		if err != nil {
			return config.Config{}, nil, err
		}
		if net.Profile != "" && !profileGiven {
			*profile = net.Profile
		}
	}
	mk, ok := config.Profiles[*profile]
	if !ok {
		return config.Config{}, nil, fmt.Errorf("unknown profile %q (want default or local)", *profile)
	}
	cfg := mk()
	if net != nil {
		if err := net.Apply(&cfg); err != nil {
			return config.Config{}, nil, err
		}
	}
	return cfg, net, nil
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func runID(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog id", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := needHome(stderr, "id", *home); code != 0 {
		return code
	}
	key, err := loadKey(*home)
	if err != nil {
		return fail(stderr, "id", err)
	}
	id, _ := peer.IDFromPrivateKey(key)
	fmt.Fprintln(stdout, id)
	return 0
}

// loadKey is node.LoadKey, a missing key being a usage error: --home names
// no node, and the message says to run pog init.
func loadKey(home string) (crypto.PrivKey, error) {
	key, err := config.LoadKey(home)
	if _, serr := os.Stat(filepath.Join(home, config.KeyFile)); err != nil && errors.Is(serr, os.ErrNotExist) {
		return nil, &config.Error{Err: err}
	}
	return key, err
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// runFlags are the settings pog run's flags override.
type runFlags struct {
	listen, bootstrap            multiFlag
	logLevel, logFormat, apiAddr string
}

func (f *runFlags) define(fs *flag.FlagSet) {
	fs.Var(&f.listen, "listen", "listen `multiaddr` (repeatable; replaces the config's node.listen)")
	fs.Var(&f.bootstrap, "bootstrap", "peer to dial at start, a `multiaddr` /ip4/…/p2p/<id> (repeatable; added to node.bootstrap)")
	fs.StringVar(&f.logLevel, "log-level", "", "override node.log_level: debug, info, warn, error")
	fs.StringVar(&f.logFormat, "log-format", "", "override node.log_format: text or json")
	fs.StringVar(&f.apiAddr, "api", "", "override node.api: serve the local API, /metrics and the dashboard on host:port")
}

// config is home's configuration (config.toml, then the environment) with
// the flags' overrides, checked: a bad setting is blamed on its file,
// variable or flag. --bootstrap adds to the config's list, so its values
// are checked on their own.
func (f *runFlags) config(home string) (config.Config, error) {
	for _, a := range f.bootstrap {
		if _, err := peer.AddrInfoFromString(a); err != nil {
			return config.Config{}, &config.Error{Err: fmt.Errorf("flag --bootstrap %q: want a multiaddr ending in /p2p/<peer id>: %v", a, err)}
		}
	}
	cfg, origins, err := config.ReadConfig(home)
	if err != nil {
		return cfg, err
	}
	if len(f.listen) > 0 {
		cfg.Node.Listen = f.listen
		origins["node.listen"] = "flag --listen"
	}
	cfg.Node.Bootstrap = append(cfg.Node.Bootstrap, f.bootstrap...)
	for _, o := range []struct {
		key, flag, val string
		dst            *string
	}{
		{"node.log_level", "log-level", f.logLevel, &cfg.Node.LogLevel},
		{"node.log_format", "log-format", f.logFormat, &cfg.Node.LogFormat},
		{"node.api", "api", f.apiAddr, &cfg.Node.API},
	} {
		if o.val != "" {
			*o.dst, origins[o.key] = o.val, "flag --"+o.flag
		}
	}
	return cfg, cfg.Check(origins)
}

// parseRole reads --role, saying what it takes when missing or wrong.
func parseRole(s string) (node.Role, error) {
	if s == "" {
		return "", errors.New("--role is required: --role miner|validator")
	}
	if _, err := node.ParseRole(s); err != nil {
		return "", fmt.Errorf("unknown role %q: want --role miner|validator", s)
	}
	return node.Role(s), nil
}

func runNode(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	roleFlag := fs.String("role", "", "miner or validator (required)")
	var f runFlags
	f.define(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := needHome(stderr, "run", *home); code != 0 {
		return code
	}
	role, err := parseRole(*roleFlag)
	if err != nil {
		return usageError(stderr, "run", err)
	}
	cfg, err := f.config(*home)
	if err != nil {
		return fail(stderr, "run", err)
	}
	log := newLogger(stderr, cfg.Node)
	key, err := loadKey(*home)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitCode(err)
	}
	o := node.Options{Config: cfg, Role: role, Key: key, Logger: log}
	if role == node.RoleMiner {
		closePlot, ok := minerOptions(&o, *home)
		if !ok {
			return 1
		}
		defer closePlot()
	}
	if o.Stakes, err = config.LoadGenesis(*home, cfg); err != nil {
		log.Error("cannot start", "err", err)
		return exitCode(err)
	}
	withAPI, err := apiOptions(&o, *home)
	if err != nil {
		log.Error("cannot start the api", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = runWithReopen(ctx, log, reopenBackoff, func() error {
		return runOnce(ctx, filepath.Join(*home, config.StoreDir), o, withAPI)
	})
	if err != nil {
		log.Error("stopped with an error", "err", err)
		return 1
	}
	log.Info("stopped cleanly")
	return 0
}

// minerOptions opens what only a miner needs: its backend, its measured
// hardware when it announces it, and its plot, which the returned func
// closes. It logs why when it fails.
func minerOptions(o *node.Options, home string) (closePlot func(), ok bool) {
	cfg, log := o.Config, o.Logger
	var err error
	if o.Backend, err = openBackend(cfg.Miner.Backend, log); err != nil {
		log.Error("cannot start", "err", err)
		return nil, false
	}
	if cfg.Miner.MeasureHardware {
		log.Info("measuring hardware (cached for a day in hw.json)")
		rep, cached, err := hw.Cached(context.Background(), filepath.Join(home, "hw.json"), 24*time.Hour, hw.Options{Dir: home})
		if err != nil && rep == nil {
			log.Error("cannot measure hardware", "err", err)
			return nil, false
		}
		o.Hardware, o.GPUs = announcedHardware(rep)
		log.Info("hardware (self-measured, not scored)", "cached", cached, "gpus", len(rep.GPUs), "cores", rep.CPU.Cores, "ram_bytes", rep.RAM.TotalBytes)
	}
	if cfg.Miner.PlotBytes == 0 {
		return func() {}, true
	}
	pl, f, err := openPlot(home, cfg, o.Key, log)
	if err != nil {
		log.Error("cannot open the plot", "err", err)
		return nil, false
	}
	o.Plot = pl
	return func() { f.Close() }, true
}

// apiOptions checks the API's config, gives the node metrics to serve, and
// returns what starts the API. The API serves one run's node and store, so
// runOnce starts it anew after a reopen.
func apiOptions(o *node.Options, home string) (func(*node.Node, *store.Store) (func(), error), error) {
	cfg := o.Config
	if cfg.Node.API == "" {
		return func(*node.Node, *store.Store) (func(), error) { return func() {}, nil }, nil
	}
	apiToken, err := checkAPIConfig(home, cfg.Node)
	if err != nil {
		return nil, err
	}
	o.Metrics = metrics.New()
	stakes, m, log := o.Stakes, o.Metrics, o.Logger
	return func(n *node.Node, st *store.Store) (func(), error) {
		return startAPI(home, apiToken, cfg, n, st, stakes, m, log)
	}, nil
}

// storeFS is the filesystem stores are opened on; nil means the OS's.
// Tests put faults in it.
var storeFS vfs.FS

// runOnce opens the store and runs the node on it until ctx ends or the
// store fails. Every node keeps every validator's epoch records;
// validators also keep their round evidence.
func runOnce(ctx context.Context, dir string, o node.Options, withAPI func(*node.Node, *store.Store) (func(), error)) (err error) {
	st, err := store.Open(dir, store.Options{FS: storeFS})
	if err != nil {
		return fmt.Errorf("%w: %w", errStoreOpen, err)
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	o.Store = st
	n, err := node.New(ctx, o)
	if err != nil {
		return fmt.Errorf("cannot start: %w", err)
	}
	stopAPI, err := withAPI(n, st)
	if err != nil {
		n.Close()
		return fmt.Errorf("cannot start the api: %w", err)
	}
	defer stopAPI()
	return n.Run(ctx)
}

// announcedHardware maps a hardware report to what a miner announces.
func announcedHardware(r *hw.Report) (*pb.Hardware, []*pb.GPU) {
	ghz := r.CPU.MaxMHz
	if ghz == 0 {
		ghz = r.CPU.CurMHz
	}
	h := &pb.Hardware{CpuCores: uint32(r.CPU.Cores), CpuGhz: ghz / 1000, RamBytes: r.RAM.TotalBytes, RamGbps: r.RAM.CopyGBps,
		StorageBytes: r.Storage.TotalBytes, StorageMbps: min(r.Storage.WriteMBps, r.Storage.ReadMBps)}
	var gpus []*pb.GPU
	for _, g := range r.GPUs {
		gpus = append(gpus, &pb.GPU{Name: g.Name, Uuid: g.UUID, MemoryBytes: g.MemoryBytes})
	}
	return h, gpus
}

func newLogger(w io.Writer, cfg config.NodeConfig) *slog.Logger {
	var level slog.Level
	level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runRounds(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog rounds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	jsonOut := fs.Bool("json", false, "print a JSON array")
	epoch := fs.Int64("epoch", -1, "only this epoch (default: all)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := needHome(stderr, "rounds", *home); code != 0 {
		return code
	}
	var rows []roundRow
	path := "/api/v1/rounds?limit=5000"
	if *epoch >= 0 {
		path += fmt.Sprintf("&epoch=%d", *epoch)
	}
	if ok, code := fromRunningNode(stderr, "rounds", *home, path, &rows); ok {
		if code == 0 {
			printRounds(stdout, rows, *jsonOut)
		}
		return code
	}
	dir := filepath.Join(*home, config.StoreDir)
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(stderr, "pog rounds: no evidence store at %s (has a validator run with this home?)\n", dir)
		return 1
	}
	st, err := openStoreReadOnly(dir)
	if err != nil {
		fmt.Fprintf(stderr, "pog rounds: %v\n", err)
		return 1
	}
	defer st.Close()
	from, to := uint64(0), ^uint64(0)
	if *epoch >= 0 {
		from, to = uint64(*epoch), uint64(*epoch)
	}
	rows = []roundRow{}
	for r, err := range st.Rounds(from, to) {
		if err != nil {
			fmt.Fprintf(stderr, "pog rounds: %v\n", err)
			return 1
		}
		rows = append(rows, roundRowOf(r))
	}
	printRounds(stdout, rows, *jsonOut)
	return 0
}

func printRounds(stdout io.Writer, rows []roundRow, jsonOut bool) {
	printTable(stdout, jsonOut, rows, "EPOCH\tROUND\tMINER\tVERDICT\tTFLOPS\tCOMMIT ms\tREASON", func(r roundRow) string {
		return fmt.Sprintf("%d\t%d\t%s\t%s\t%.4f\t%.1f\t%s", r.Epoch, r.Round, r.Miner, r.Verdict, r.TFLOPS, r.CommitMS, r.Reason)
	})
}

// openBackend opens the configured backend. A GPU backend that finds no
// usable GPU falls back to the CPU with a warning saying why, so a node
// configured for GPUs still joins (and is scored for what it computes).
func openBackend(name string, log *slog.Logger) (kernels.Backend, error) {
	be, err := kernels.Open(name)
	if err != nil && name != "cpu" {
		log.Warn("backend unusable; mining on the CPU instead", "backend", name, "err", err)
		return kernels.Open("cpu")
	}
	if n, ok := be.(interface{ Notes() []string }); ok {
		for _, note := range n.Notes() {
			log.Warn("backend note", "backend", name, "note", note)
		}
	}
	return be, err
}

// openPlot opens, or builds at first start, the miner's plot at
// miner.plot_path (relative to home).
func openPlot(home string, cfg config.Config, key crypto.PrivKey, log *slog.Logger) (*miner.Plot, io.Closer, error) {
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	path := cfg.Miner.PlotPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(home, path)
	}
	return miner.OpenPlot(path, id, uint8(cfg.Network.PlotBlockLog), cfg.Network.PlotRounds, cfg.Miner.PlotBytes, cfg.Miner.Workers, log)
}
