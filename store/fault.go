package store

import (
	"errors"
	"fmt"
	"log"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A store fails, for good, at its first fault: a failed write, a read
// error, on-disk corruption Pebble reports, or a fatal error in one of
// Pebble's background goroutines. After it the store refuses writes,
// Failed's channel is closed, and Err names the fault; the node stops and
// reopens the store (or exits), since an fsync error cannot be retried in
// place and corruption must not be papered over.

// faults records a store's first fault.
type faults struct {
	mu     sync.Mutex
	err    error
	parked bool // a Pebble goroutine waits forever in halt: Close must not wait for it
	done   chan struct{}
	park   chan struct{} // closed when parked is set
	// opening is set while Pebble's Open runs: a background error then
	// halts (see eventListener).
	opening atomic.Bool
}

func newFaults() *faults { return &faults{done: make(chan struct{}), park: make(chan struct{})} }

// await runs fn under guarded and returns its error, or the fault if a
// Pebble goroutine parks first: fn may be waiting for that goroutine (Open
// for its WAL-replay flush, a write stalled on a full memtable) and would
// never return. fn's goroutine is then left behind, with the store.
func (f *faults) await(fn func() error) error {
	res := make(chan error, 1)
	go func() { res <- guarded(fn) }()
	select {
	case err := <-res:
		return err
	case <-f.park:
		select {
		case err := <-res:
			return err
		default:
		}
		err, _ := f.get()
		return err
	}
}

// record keeps err if it is the first fault.
func (f *faults) record(err error) { f.note(err, false) }

// note records err and, if park, that a goroutine is parked: in one step,
// so that whoever sees Failed because of a parked goroutine sees it parked.
func (f *faults) note(err error, park bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
		close(f.done)
	}
	if park && !f.parked {
		f.parked = true
		close(f.park)
	}
}

func (f *faults) get() (error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err, f.parked
}

// classify marks Pebble's corruption errors with ErrCorrupt, so that callers
// tell damage (never retried) from other I/O errors (worth a reopen).
func classify(err error) error {
	if err == nil || !pebble.IsCorruptionError(err) || errors.Is(err, ErrCorrupt) {
		return err
	}
	// Pebble's corruption errors carry detail lines; one line reads better.
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return &corruptError{msg: ErrCorrupt.Error() + ": " + msg, cause: err}
}

// corruptError is a Pebble corruption error marked with ErrCorrupt.
type corruptError struct {
	msg   string
	cause error
}

func (e *corruptError) Error() string   { return e.msg }
func (e *corruptError) Unwrap() []error { return []error{ErrCorrupt, e.cause} }

// eventListener records corruption and background errors as faults. By
// default Pebble ends the process on corruption (Logger.Fatalf), from read
// paths too; here the read returns its error and the store fails.
func eventListener(f *faults) *pebble.EventListener {
	return &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			f.record(fmt.Errorf("%w: file %s: %v", ErrCorrupt, info.Path, info.Details))
		},
		BackgroundError: func(err error) {
			if f.opening.Load() {
				// Open waits for the flush of the replayed WAL, which Pebble
				// retries at once and for ever when it fails (a full disk):
				// halting it makes Open fail instead of hang.
				f.halt(&fatalError{msg: "background error during open: " + err.Error(), cause: err})
			}
			f.record(classify(fmt.Errorf("store: background: %w", err)))
		},
	}
}

// fatalError is what logger.Fatalf panics with. It unwraps to the first
// error among Fatalf's arguments, so that callers can still test for, say,
// a full disk.
type fatalError struct {
	msg   string
	cause error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

// logger routes Pebble's messages to the standard logger, as Pebble's
// default does, but drops the routine info lines (WAL and compaction
// chatter), and never exits on Fatalf.
type logger struct{ f *faults }

func (logger) Infof(string, ...any) {}

func (logger) Errorf(format string, args ...any) {
	_ = log.Output(2, fmt.Sprintf(format, args...))
}

// Fatalf records the fault. Pebble calls it where it cannot go on (a failed
// WAL or MANIFEST write or sync), so it must not return.
func (l logger) Fatalf(format string, args ...any) {
	fe := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			fe.cause = err
			break
		}
	}
	l.f.halt(fe)
}

// halt records fe as the fault and does not return. Under guarded (a store
// method's own goroutine) it panics, and guarded turns the panic back into
// an error: there, unwinding is safe. Anywhere else it is a Pebble
// background goroutine, which holds Pebble's locks: it is parked for good,
// and the store's owner sees Failed and stops.
func (f *faults) halt(fe *fatalError) {
	guard := underGuard()
	f.note(classify(fe), !guard)
	if guard {
		panic(fe)
	}
	_ = log.Output(3, "store: "+fe.msg+" (the store stopped; the node will stop)")
	select {}
}

// guardName is guarded's symbol, which Fatalf looks for on its stack.
const guardName = "github.com/pog-network/pog/store.guarded"

// guarded runs fn, returning a Fatalf panic as its error. Other panics are
// bugs and propagate.
func guarded(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*fatalError)
			if !ok {
				var rt runtime.Error
				e, isErr := p.(error)
				if !isErr || errors.As(e, &rt) {
					panic(p)
				}
				err = classify(e) // Pebble's Open panics with plain I/O errors too
				return
			}
			err = classify(fe)
		}
	}()
	return fn()
}

func underGuard() bool {
	pcs := make([]uintptr, 512)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		if fr.Function == guardName || strings.HasPrefix(fr.Function, guardName+".") {
			return true
		}
		if !more {
			return false
		}
	}
}

// guardedFS makes a failed directory sync a fault. Pebble panics on one
// (an fsync error cannot be retried), from background goroutines too,
// where no recover can reach; here the sync parks such a goroutine as
// Fatalf does, and returns the error under guarded, whose recover turns
// Pebble's panic back into an error.
type guardedFS struct {
	vfs.FS
	f *faults
}

func (g guardedFS) OpenDir(name string) (vfs.File, error) {
	d, err := g.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return guardedDir{d, g.f, name}, nil
}

func (g guardedFS) Unwrap() vfs.FS { return g.FS }

type guardedDir struct {
	vfs.File
	f    *faults
	name string
}

func (d guardedDir) Sync() error {
	err := d.File.Sync()
	if err != nil {
		logger{d.f}.Fatalf("sync of directory %s failed: %v", d.name, err)
	}
	return err
}
