package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pog-network/pog/testnet"
	"github.com/pog-network/pog/testnet/explore"
	"github.com/pog-network/pog/testnet/report"
)

func init() {
	commands["testnet"] = command{"run a local network: validators, miners on simulated GPUs, adversaries; write a report", runTestnet}
	commands["testnet-node"] = command{"(internal) run the nodes of one pog testnet --procs child", runTestnetNode}
}

func runTestnetNode(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog testnet-node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("spec", "", "child spec written by pog testnet --procs")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := testnet.RunChild(ctx, *spec, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "pog testnet-node: %v\n", err)
		return 1
	}
	return 0
}

func runTestnet(args []string, stdout, stderr io.Writer) int {
	d := testnet.DefaultConfig()
	fs := flag.NewFlagSet("pog testnet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	validators := fs.Int("validators", d.Validators, "honest validators")
	miners := fs.Int("miners", d.Miners, "honest miners (profiles H200, H100, A100, RTX4090, CPU, H200-small-host in turn)")
	epochs := fs.Int("epochs", d.Epochs, "full epochs to run")
	epochLength := fs.Duration("epoch-length", d.EpochLength, "epoch length")
	seed := fs.Int64("seed", d.Seed, "seed recorded with the run")
	out := fs.String("out", d.Out, "directory for the report and the nodes' homes")
	adv := fs.String("adversaries", "", "adversary classes to add beside honest miners: a comma-separated list of "+
		strings.Join(testnet.Adversaries, ", ")+", or all")
	logLevel := fs.String("log-level", "", "write node logs to OUT/nodes.log at this level (debug, info, warn, error)")
	procs := fs.Bool("procs", false, "run every node as its own OS process (a sybil pair shares one)")
	netns := fs.Bool("netns", false, "with --procs, root only: each process in its own network namespace, joined by veth pairs")
	delay := fs.Duration("netem-delay", 0, "with --netns: tc netem delay on every host's link")
	loss := fs.Float64("netem-loss", 0, "with --netns: tc netem loss, percent")
	partition := fs.Bool("partition", false, "with --netns: cut half the honest miners off for two rounds, then check the network heals")
	delays := fs.String("delay", "", "added latency each way, in process, as NAME=DURATION,… by miner name or profile (far defaults to 200ms)")
	roundInterval := fs.Duration("round-interval", 0, "how often a validator looks for miners due a round (0: the local profile's 250ms; under the slot schedule at most a sixteenth of a slot)")
	chained := fs.Bool("chained-round-checks", d.ChainedRoundChecks, "with --slot-schedule=false, enforce issue 10's bounds: delayed miners within 3 % of their profile, timeshare ≤ 1.1× (the slot schedule always enforces them)")
	slots := fs.Bool("slot-schedule", d.SlotSchedule, "list the validators, so they take turns at each miner in slots (SPEC §16), and judge the timeshare gain against that schedule's bound; false: each validator pauses at random")
	duty := fs.Float64("duty-cycle", 0, "validator.duty_cycle (0: 0.95 with --slot-schedule, else 0.1 per validator)")
	sim := fs.Bool("sim", true, "run in virtual time on a simulated network (stores in memory): the machine's load changes only how long the run takes; false: real time on loopback (--procs and --netns always are)")
	hostMax := fs.Duration("host-max-round", 0, "validator.host_max_round: how long a distant miner's host rounds may grow, with one host set per epoch without the slot schedule (0: 1 s in virtual time, a tenth of production's as the round target is, and production's 10 s with --production-timing; 1 ms with --sim=false, so they do not grow)")
	explore := fs.Int("explore", 0, "run N seeds from --seed, each a small random network with random faults (partitions, packet loss, latency spikes, a crash and restart, a failing store) in virtual time, and check the invariants that hold under faults; reports in OUT/explore/SEED")
	prodTiming := fs.Bool("production-timing", false, "in virtual time, run every timing setting at production's (10 s round targets, 64 steps, deadlines, host rounds, announces), with epochs ten times as long (--epoch-length default 6m40s)")
	cpuProfile := fs.String("cpuprofile", "", "with --sim: write the run's CPU profile to this file (go tool pprof reads it)")
	memProfile := fs.String("memprofile", "", "write the heap profile to this file once the last epoch's records are in, before the network stops (and, in virtual time, at each progress line until then)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *cpuProfile != "" {
		abs, err := filepath.Abs(*cpuProfile)
		if err != nil || !*sim || *procs || *netns {
			fmt.Fprintln(stderr, "pog testnet: --cpuprofile needs a path and a simulated run (--sim, not --procs)")
			return 2
		}
		*cpuProfile = abs
	}
	if *explore > 0 {
		return runExplore(*explore, *seed, filepath.Join(*out, "explore"), *cpuProfile, stdout)
	}
	advs, err := testnet.ParseAdversaries(*adv)
	if err != nil {
		fmt.Fprintf(stderr, "pog testnet: %v\n", err)
		return 2
	}
	cfg := d
	if *prodTiming {
		if !*sim || *procs || *netns {
			fmt.Fprintln(stderr, "pog testnet: --production-timing runs in virtual time only (--sim, not --procs)")
			return 2
		}
		cfg = testnet.ProductionTiming(cfg)
		if !flagSet(fs, "epoch-length") {
			*epochLength = cfg.EpochLength
		}
	}
	if cfg.Delays, err = testnet.ParseDelays(*delays); err != nil {
		fmt.Fprintf(stderr, "pog testnet: --delay: %v\n", err)
		return 2
	}
	cfg.RoundInterval, cfg.ChainedRoundChecks, cfg.DutyCycle, cfg.SlotSchedule = *roundInterval, *chained, *duty, *slots
	cfg.HostMaxRound, cfg.HeapProfile = *hostMax, *memProfile
	cfg.Validators, cfg.Miners, cfg.Epochs, cfg.EpochLength, cfg.Seed, cfg.Out, cfg.Adversaries = *validators, *miners, *epochs, *epochLength, *seed, *out, advs
	cfg.Progress = stderr
	cfg.Procs, cfg.Netns, cfg.NetemDelay, cfg.NetemLoss, cfg.Partition = *procs || *netns, *netns, *delay, *loss, *partition
	if (*delay > 0 || *loss > 0 || *partition) && !*netns {
		fmt.Fprintln(stderr, "pog testnet: --netem-delay, --netem-loss and --partition need --netns")
		return 2
	}
	if *logLevel != "" {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
			fmt.Fprintf(stderr, "pog testnet: --log-level: %v\n", err)
			return 2
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintf(stderr, "pog testnet: %v\n", err)
			return 1
		}
		f, err := os.Create(filepath.Join(*out, "nodes.log"))
		if err != nil {
			fmt.Fprintf(stderr, "pog testnet: %v\n", err)
			return 1
		}
		defer f.Close()
		cfg.Log = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: lvl}))
	}
	if *sim && !cfg.Procs {
		simGC()
		testnet.RunSim(cfg, *cpuProfile, func(s *report.Summary, err error) bool { return printTestnet(s, err, cfg, stdout, stderr) == 0 })
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s, err := testnet.Run(ctx, cfg)
	return printTestnet(s, err, cfg, stdout, stderr)
}

// runExplore runs n seeds from first (pog testnet --explore), one line
// each, and for each failure the command that reproduces it; the process
// exits 1 if any seed failed.
func runExplore(n int, first int64, out, cpuProfile string, stdout io.Writer) int {
	var cfgs []testnet.Config
	for i := range int64(n) {
		cfgs = append(cfgs, explore.Config(first+i, out))
	}
	var failed []int64
	testnet.RunSims(cfgs, cpuProfile, func(cfg testnet.Config, s *report.Summary, err error) bool {
		bad := explore.Failures(s, err)
		verdict := "ok"
		if len(bad) > 0 {
			verdict = "FAILED"
			failed = append(failed, cfg.Seed)
		}
		if s != nil {
			verdict += fmt.Sprintf(" (%.0f s here)", s.WallSeconds)
		}
		fmt.Fprintf(stdout, "seed %d: %s: %s\n", cfg.Seed, verdict, explore.Line(cfg))
		for _, b := range bad {
			fmt.Fprintf(stdout, "  %s\n", b)
		}
		if len(bad) > 0 {
			fmt.Fprintf(stdout, "  reproduce: bin/pog testnet --explore 1 --seed %d\n", cfg.Seed)
		}
		if cfg.Seed == first+int64(n)-1 {
			fmt.Fprintf(stdout, "explore: %d seeds from %d, %d failed %v\n", n, first, len(failed), failed)
		}
		return len(bad) == 0
	})
	return 1 // RunSims exits
}

// printTestnet prints a run's checks and verdict, and returns its exit code.
func printTestnet(s *report.Summary, err error, cfg testnet.Config, stdout, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintf(stderr, "pog testnet: %v\n", err)
		return 1
	}
	for _, c := range s.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", mark, c.Name, c.Detail)
	}
	verdict := "PASSED"
	if !s.Passed {
		verdict = "FAILED"
	}
	took := fmt.Sprintf("%.0f s", s.DurationSeconds)
	if s.Simulated {
		took = fmt.Sprintf("%.0f s of virtual time (%.0f s here)", s.DurationSeconds, s.WallSeconds)
	}
	fmt.Fprintf(stdout, "testnet %s in %s: %d validators, %d miners, %d epochs; report in %s\n",
		verdict, took, s.Validators, s.Miners, len(s.Epochs), filepath.Join(cfg.Out, "report.md"))
	if !s.Passed {
		return 1
	}
	return 0
}
