package testnet

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"testing/synctest"

	"github.com/pog-network/pog/testnet/report"
)

// RunSim runs the network in virtual time (Config.Sim) and exits the
// process: 0 if done says the run passed, else 1. A non-empty cpuProfile
// is where the run's CPU profile is written.
//
// synctest gives a bubble of goroutines a fake clock, and runs only under a
// *testing.T; testing.Main, kept for programs that run tests without `go
// test`, gives this binary one, so pog needs no Go toolchain to simulate.
func RunSim(cfg Config, cpuProfile string, done func(*report.Summary, error) bool) {
	RunSims([]Config{cfg}, cpuProfile, func(_ Config, s *report.Summary, err error) bool { return done(s, err) })
}

// RunSims runs each network in turn, each in a bubble of its own (pog
// testnet --explore), and exits the process: 0 if done passed every run.
func RunSims(cfgs []Config, cpuProfile string, done func(Config, *report.Summary, error) bool) {
	test := func(t *testing.T) {
		ok := true
		for _, cfg := range cfgs {
			cfg.Sim = true
			// A bubble that fails ends the test (synctest.Test calls
			// FailNow): fail only once every network has run.
			synctest.Test(t, func(t *testing.T) {
				s, err := Run(t.Context(), cfg)
				ok = done(cfg, s, err) && ok
			})
		}
		if !ok {
			t.Fail()
		}
	}
	if cpuProfile != "" {
		// testing.Main cannot profile; the test stops it before the exit.
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pog testnet:", err)
			os.Exit(1)
		}
		run := test
		test = func(t *testing.T) { defer stop(); run(t) }
	}
	os.Args = os.Args[:1] // testing would parse pog's flags as its own
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "pog-testnet", F: test}}, nil, nil)
}

// startCPUProfile profiles the process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile writes the live heap to path, after a collection so
// that it holds only what is in use; nothing if path is empty. It writes
// a temporary file and renames it over path, so that a run killed while
// writing leaves the previous profile whole.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
