package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/store"
)

// TestFlagRanges: numeric flags outside their range are usage errors
// naming the flag.
func TestFlagRanges(t *testing.T) {
	home := filepath.Join(t.TempDir(), "n")
	runPog("init", "--home", home, "--profile", "local")
	for _, args := range [][]string{
		{"bench", "--workers", "-1"},
		{"bench", "--workers", "100000"},
		{"rounds", "--home", home, "--epoch", "-5"},
		{"weights", "--home", home, "--epoch", "-2"},
		{"audit", "--home", home, "--epoch", "-3"},
		{"testnet", "--validators", "0"},
		{"testnet", "--epoch-length", "1ns"},
	} {
		code, _, errs := runPog(args...)
		if code != 2 || !strings.Contains(errs, "--"+strings.TrimPrefix(args[len(args)-2], "--")) {
			t.Errorf("pog %v: exit %d, %q; want 2 naming the flag", args, code, errs)
		}
	}
}

// TestAuditEmptyEpoch: auditing an epoch the store holds nothing of is a
// failure, not "audit OK".
func TestAuditEmptyEpoch(t *testing.T) {
	home := validatorHome(t, t.TempDir(), false)
	code, out, errs := runPog("audit", "--home", home, "--epoch", "99")
	if code != 1 || strings.Contains(out, "OK") || !strings.Contains(errs, "no records") {
		t.Fatalf("audit of an empty epoch: exit %d, %q %q", code, out, errs)
	}
}

// TestRunWithReopen: a store I/O failure is retried after each backoff and
// then given up; corruption, a store this process holds and a first failed
// open are not retried.
func TestRunWithReopen(t *testing.T) {
	ioFail := fmt.Errorf("%w: disk went away", node.ErrStoreFailed)
	openFail := fmt.Errorf("%w: still gone", errStoreOpen)
	corrupt := fmt.Errorf("%w: %w", node.ErrStoreFailed, store.ErrCorrupt)
	held := fmt.Errorf("%w: %w", errStoreOpen, store.ErrHeld)
	backoff := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	cases := []struct {
		name   string
		errs   []error // what each run returns; nil ends
		runs   int
		failed bool
	}{
		{"recovers", []error{ioFail, openFail, nil}, 3, false},
		{"gives up", []error{ioFail, openFail, openFail, openFail, openFail}, 4, true},
		{"corruption", []error{corrupt, nil}, 1, true},
		{"held", []error{ioFail, held, nil}, 2, true},
		{"first open", []error{openFail, nil}, 1, true},
		{"other error", []error{errors.New("bad config"), nil}, 1, true},
	}
	for _, c := range cases {
		runs := 0
		err := runWithReopen(context.Background(), slog.New(slog.DiscardHandler), backoff, func() error {
			runs++
			return c.errs[runs-1]
		})
		if runs != c.runs || (err != nil) != c.failed {
			t.Errorf("%s: %d runs, error %v; want %d runs, failed %v", c.name, runs, err, c.runs, c.failed)
		}
	}
}

// TestRunStoreFault: the disk fails under a running validator. Whether its
// store closes (every write failing) or stays held by a Pebble goroutine
// parked at the fault (a failed MANIFEST write), pog run gives up within
// its few reopens and returns the store's fault, so the process exits 1;
// a held store is not reopened at all, since this process cannot.
func TestRunStoreFault(t *testing.T) {
	if total := sumDurations(reopenBackoff); total > 10*time.Second {
		t.Errorf("reopen backoff %v takes %v in all; want an exit within seconds", reopenBackoff, total)
	}
	cases := []struct {
		name  string
		fail  func(errorfs.Op) bool
		fault func(st *store.Store) error
		runs  int
	}{
		{"dead disk", func(errorfs.Op) bool { return true }, func(st *store.Store) error {
			return st.PutRound(&store.RoundRecord{Epoch: 9, Round: 99, Miner: []byte("m"), Validator: []byte("v"),
				Challenge: []byte("c"), Verdict: store.VerdictFailed, Reason: "test"})
		}, 4},
		{"held store", func(op errorfs.Op) bool {
			return op.Kind.ReadOrWrite() == errorfs.OpIsWrite && strings.Contains(op.Path, "MANIFEST")
		}, func(st *store.Store) error {
			return st.Tamper(func(db *pebble.DB) error { _, err := db.AsyncFlush(); return err })
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := validatorHome(t, t.TempDir(), false)
			var dead atomic.Bool
			storeFS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
				if dead.Load() && c.fail(op) {
					return syscall.EIO
				}
				return nil
			}))
			defer func() { storeFS = nil }()
			o := homeOptions(t, home)
			// The disk fails once the node is up, before it runs.
			failDisk := func(_ *node.Node, st *store.Store) (func(), error) {
				if !dead.Swap(true) {
					c.fault(st)
				}
				return func() {}, nil
			}
			runs := 0
			done := make(chan error, 1)
			go func() {
				done <- runWithReopen(context.Background(), o.Logger, []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, func() error {
					runs++
					return runOnce(context.Background(), filepath.Join(home, config.StoreDir), o, failDisk)
				})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute): // a guard: it returns in milliseconds
				t.Fatal("pog run went on after its store failed")
			}
			if runs != c.runs || !errors.Is(err, node.ErrStoreFailed) || !errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), "another process") {
				t.Fatalf("%d runs, then %v; want %d, and the store's I/O fault", runs, err, c.runs)
			}
			t.Log(err)
		})
	}
}

func sumDurations(ds []time.Duration) (total time.Duration) {
	for _, d := range ds {
		total += d
	}
	return total
}

// homeOptions are the options pog run gives a validator on home.
func homeOptions(t *testing.T, home string) node.Options {
	t.Helper()
	cfg, err := config.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	key, err := config.LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	stakes, err := config.LoadGenesis(home, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return node.Options{Config: cfg, Role: node.RoleValidator, Key: key, Logger: slog.New(slog.DiscardHandler), Stakes: stakes}
}
