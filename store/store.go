// Package store owns the node's durable evidence: every round record a
// validator writes (challenge, commitment, revealed secret, sampled tiles,
// timings and verdict), append-only, in Pebble.
//
// Key layout (all integers big-endian, so byte order is numeric order):
//
//	"meta/schema"                              -> BE64 schema version (1)
//	"r" ‖ BE64 epoch ‖ BE64 round ‖ miner      -> round record (record.go)
//
// Records therefore iterate by epoch, then round, then miner bytes. The miner
// ID is last and unprefixed: its length is the key's length less 17.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"log"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound = errors.New("store: round record not found")
	ErrExists   = errors.New("store: round record already exists")
	ErrCorrupt  = errors.New("store: corrupt data")
	ErrClosed   = errors.New("store: closed")
)

// schemaVersion is the key layout and value formats this build reads and
// writes. A store written by a newer build is refused, not misread.
const schemaVersion = 1

const (
	recordTag    = 'r'
	recordKeyMin = 1 + 8 + 8 + 1
	recordKeyMax = 1 + 8 + 8 + MaxPeerIDLen
)

var schemaKey = []byte("meta/schema")

// Options configures Open.
type Options struct {
	// FS is the filesystem the store lives on; nil means the OS's.
	FS vfs.FS
}

// Store is an append-only store of round records. Its methods are safe for
// concurrent use, except that Round and Rounds must not overlap Close.
type Store struct {
	db     *pebble.DB
	closed atomic.Bool

	// mu serialises PutRound's check-then-write: Pebble has no
	// compare-and-set, so two writers of one key would both see it absent.
	mu sync.Mutex
	// writeErr is the first failed write. After it the WAL's state is
	// unknown (the record may be applied in memory yet not durable), so the
	// store refuses further writes until it is reopened and recovered.
	writeErr error
}

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	db, err := openPebble(dir, fs)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	if err := checkSchema(db, dir); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &Store{db: db}, nil
}

// checkSchema writes the schema version into a new store and checks it in
// an existing one.
func checkSchema(db *pebble.DB, dir string) error {
	v, closer, err := db.Get(schemaKey)
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	if errors.Is(err, pebble.ErrNotFound) {
		// A store with records but no version lost its meta key: refuse
		// rather than stamp a version on data of unknown format.
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{recordTag}, UpperBound: []byte{recordTag + 1}})
		if err != nil {
			return fmt.Errorf("store: open %s: %w", dir, err)
		}
		hasRecords := it.First()
		if err := it.Close(); err != nil {
			return fmt.Errorf("store: open %s: %w", dir, err)
		}
		if hasRecords {
			return fmt.Errorf("%w: %s: records present but no schema version", ErrCorrupt, dir)
		}
		if err := syncSet(db, schemaKey, binary.BigEndian.AppendUint64(nil, schemaVersion)); err != nil {
			return fmt.Errorf("store: open %s: write schema version: %w", dir, err)
		}
		return nil
	}
	defer closer.Close()
	if len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
		return fmt.Errorf("%w: %s: schema version value %x, want 8 bytes, non-zero", ErrCorrupt, dir, v)
	}
	if ver := binary.BigEndian.Uint64(v); ver > schemaVersion {
		return fmt.Errorf("store: %s: schema version %d is newer than this build reads (%d)", dir, ver, schemaVersion)
	}
	return nil
}

// Close closes the store. It waits for a PutRound in progress.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return ErrClosed
	}
	return s.db.Close()
}

// PutRound validates r and writes it durably (fsync). A record is never
// replaced: if one exists for r's (epoch, round, miner), the error wraps
// ErrExists. After a write error the store refuses further writes: the record
// may be visible to Round in this process without being durable. Reopen the
// store to find out whether it survived; it is then complete or absent.
func (s *Store) PutRound(r *RoundRecord) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("store: invalid round record: %w", err)
	}
	key := recordKey(r.Epoch, r.Round, r.Miner)
	val := encodeRound(r)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if s.writeErr != nil {
		return fmt.Errorf("store: refusing writes after an earlier write failed, reopen the store: %w", s.writeErr)
	}
	_, closer, err := s.db.Get(key)
	if err == nil {
		closer.Close()
		return fmt.Errorf("%w: %s", ErrExists, describeKey(r.Epoch, r.Round, r.Miner))
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("store: %s: %w", describeKey(r.Epoch, r.Round, r.Miner), err)
	}
	if err := syncSet(s.db, key, val); err != nil {
		s.writeErr = err
		return fmt.Errorf("store: write %s: %w", describeKey(r.Epoch, r.Round, r.Miner), err)
	}
	return nil
}

// Round returns the record for (epoch, round, miner), or an error wrapping
// ErrNotFound.
func (s *Store) Round(epoch, round uint64, miner []byte) (*RoundRecord, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if n := len(miner); n < 1 || n > MaxPeerIDLen {
		return nil, fmt.Errorf("store: miner: %d bytes, want 1..%d", n, MaxPeerIDLen)
	}
	v, closer, err := s.db.Get(recordKey(epoch, round, miner))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, describeKey(epoch, round, miner))
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", describeKey(epoch, round, miner), err)
	}
	defer closer.Close()
	return checkedRecord(epoch, round, miner, v)
}

// Rounds iterates over the records of epochs fromEpoch..toEpoch inclusive,
// by epoch, round and miner. An error is yielded once, with a nil record,
// and ends the iteration.
func (s *Store) Rounds(fromEpoch, toEpoch uint64) iter.Seq2[*RoundRecord, error] {
	return func(yield func(*RoundRecord, error) bool) {
		if s.closed.Load() {
			yield(nil, ErrClosed)
			return
		}
		if fromEpoch > toEpoch {
			return
		}
		upper := []byte{recordTag + 1}
		if toEpoch < math.MaxUint64 {
			upper = recordPrefix(toEpoch + 1)
		}
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: recordPrefix(fromEpoch), UpperBound: upper})
		if err != nil {
			yield(nil, fmt.Errorf("store: %w", err))
			return
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if len(k) < recordKeyMin || len(k) > recordKeyMax {
				yield(nil, fmt.Errorf("%w: record key %x has length %d, want %d..%d", ErrCorrupt, k, len(k), recordKeyMin, recordKeyMax))
				return
			}
			v, err := it.ValueAndErr()
			if err != nil {
				break // it.Error reports it
			}
			r, err := checkedRecord(binary.BigEndian.Uint64(k[1:9]), binary.BigEndian.Uint64(k[9:17]), k[17:], v)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := it.Error(); err != nil {
			yield(nil, fmt.Errorf("store: %w", err))
		}
	}
}

// Pebble treats some I/O failures as fatal, because an fsync error cannot
// be retried safely: a failed WAL write or sync, a failed MANIFEST write,
// and (by a plain panic) a failed directory sync. It reports the first two
// through Logger.Fatalf, which by default exits the process; logger panics
// instead, and the two calls below turn such panics back into errors where
// unwinding is safe. Anywhere else (a background flush, say) the panic still
// ends the process, as Pebble intends.

// openPebble opens the DB. Pebble's Open cleans up (directory lock, files,
// memory) on a panic before it reaches us, and no DB exists yet, so any I/O
// failure it panics with can be returned.
func openPebble(dir string, fs vfs.FS) (db *pebble.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			var rt runtime.Error
			e, ok := p.(error)
			if !ok || errors.As(e, &rt) {
				panic(p) // a bug, not an I/O failure
			}
			err = e
		}
	}()
	return pebble.Open(dir, &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatNewest, Logger: logger{}})
}

// syncSet writes key=val durably. A commit reports its fatal error after
// Pebble's commit pipeline has returned, with no Pebble lock held, so the DB
// can still be read and closed afterwards (it takes no more writes).
func syncSet(db *pebble.DB, key, val []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(*fatalError)
			if !ok {
				panic(p)
			}
			err = f
		}
	}()
	return db.Set(key, val, pebble.Sync)
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
// chatter) and panics on Fatalf rather than exiting.
type logger struct{}

func (logger) Infof(string, ...any) {}

func (logger) Errorf(format string, args ...any) {
	_ = log.Output(2, fmt.Sprintf(format, args...))
}

func (logger) Fatalf(format string, args ...any) {
	f := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			f.cause = err
			break
		}
	}
	_ = log.Output(2, f.msg)
	panic(f)
}

// checkedRecord decodes the value stored under (epoch, round, miner) and
// checks that the record names the same key: a value copied or misdirected
// to another key is corruption, not evidence about that key.
func checkedRecord(epoch, round uint64, miner, v []byte) (*RoundRecord, error) {
	r, err := decodeRound(v)
	if err == nil && (r.Epoch != epoch || r.Round != round || string(r.Miner) != string(miner)) {
		err = fmt.Errorf("value is for %s", describeKey(r.Epoch, r.Round, r.Miner))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, describeKey(epoch, round, miner), err)
	}
	return r, nil
}

func recordPrefix(epoch uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{recordTag}, epoch)
}

func recordKey(epoch, round uint64, miner []byte) []byte {
	k := make([]byte, 0, 17+len(miner))
	k = append(k, recordTag)
	k = binary.BigEndian.AppendUint64(k, epoch)
	k = binary.BigEndian.AppendUint64(k, round)
	return append(k, miner...)
}

func describeKey(epoch, round uint64, miner []byte) string {
	return fmt.Sprintf("epoch %d round %d miner %x", epoch, round, miner)
}
