package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/store"
)

// errStoreOpen marks a failure to open the store.
var errStoreOpen = errors.New("cannot open the store")

// reopenBackoff is how long `pog run` waits before each reopen of a store
// that failed with an I/O error (7 s in all): a reopen cures a passing
// fault; one that lasts is for the operator, so then it exits 1.
var reopenBackoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

// healthyRun is how long a run must last for its failure to count as new,
// restarting the backoff.
const healthyRun = 5 * time.Minute

// runWithReopen calls run until it returns nil or an error reopening will
// not cure. A store I/O failure (node.ErrStoreFailed), and after one a
// failed open, are retried after each backoff in turn; corruption never
// is, since a reopen would accept or hide it, nor a store this process
// still holds (store.ErrHeld), nor a first open that fails (a locked or
// damaged home). It returns run's last error, after the fault that
// started the reopens.
func runWithReopen(ctx context.Context, log *slog.Logger, backoff []time.Duration, run func() error) error {
	retries := 0
	var fault error
	for {
		start := time.Now()
		err := run()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if time.Since(start) >= healthyRun {
			retries = 0
		}
		if retries == 0 {
			fault = err
		}
		retry := (errors.Is(err, node.ErrStoreFailed) || retries > 0 && errors.Is(err, errStoreOpen)) &&
			!errors.Is(err, store.ErrCorrupt) && !errors.Is(err, store.ErrHeld)
		if !retry || retries == len(backoff) {
			return afterReopens(fault, err, retries, len(backoff))
		}
		wait := backoff[retries]
		retries++
		log.Warn("evidence store failed; reopening it", "attempt", retries, "of", len(backoff), "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// afterReopens is last, the error of reopen n of of, with the fault that
// started the reopens.
func afterReopens(fault, last error, n, of int) error {
	if n == 0 {
		return last
	}
	return fmt.Errorf("%w; reopen %d of %d failed: %w", fault, n, of, last)
}
