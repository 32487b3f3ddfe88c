package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/store"
)

// errStoreOpen marks a failure to open the store.
var errStoreOpen = errors.New("cannot open the store")

// reopenBackoff is how long `pog run` waits before each reopen of a store
// that failed with an I/O error (about a minute in all); then it exits 1.
var reopenBackoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}

// healthyRun is how long a run must last for its failure to count as new,
// restarting the backoff.
const healthyRun = 5 * time.Minute

// runWithReopen calls run until it returns nil or an error reopening will
// not cure. A store I/O failure (node.ErrStoreFailed), and after one a
// failed open, are retried after each backoff in turn; corruption never
// is, since a reopen would accept or hide it, and neither is a first open
// that fails (a locked or damaged home). It returns run's last error.
func runWithReopen(ctx context.Context, log *slog.Logger, backoff []time.Duration, run func() error) error {
	retries := 0
	for {
		start := time.Now()
		err := run()
		if err == nil || ctx.Err() != nil || errors.Is(err, store.ErrCorrupt) {
			return err
		}
		if time.Since(start) >= healthyRun {
			retries = 0
		}
		failed := errors.Is(err, node.ErrStoreFailed) || retries > 0 && errors.Is(err, errStoreOpen)
		if !failed || retries == len(backoff) {
			return err
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
