package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pog-network/pog/node"
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
// then given up; corruption and a first failed open are not retried.
func TestRunWithReopen(t *testing.T) {
	ioFail := fmt.Errorf("%w: disk went away", node.ErrStoreFailed)
	openFail := fmt.Errorf("%w: still gone", errStoreOpen)
	corrupt := fmt.Errorf("%w: %w", node.ErrStoreFailed, store.ErrCorrupt)
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
