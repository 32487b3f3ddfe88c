package testnet

import (
	"os"
	"testing"
	"testing/synctest"

	"github.com/pog-network/pog/testnet/report"
)

// RunSim runs the network in virtual time (Config.Sim) and exits the
// process: 0 if done says the run passed, else 1.
//
// synctest gives a bubble of goroutines a fake clock, and runs only under a
// *testing.T; testing.Main, kept for programs that run tests without `go
// test`, gives this binary one, so pog needs no Go toolchain to simulate.
func RunSim(cfg Config, done func(*report.Summary, error) bool) {
	cfg.Sim = true
	test := func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			if !done(Run(t.Context(), cfg)) {
				t.Fail()
			}
		})
	}
	os.Args = os.Args[:1] // testing would parse pog's flags as its own
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "pog-testnet", F: test}}, nil, nil)
}
