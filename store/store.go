// Package store owns the node's durable evidence, append-only, in Pebble:
// every round record a validator writes (challenge, commitment, revealed
// secret, sampled tiles, proofs, timings and verdict), the signed epoch
// records of the network, and the hardware announces that scoring used.
//
// Key layout (all integers big-endian, so byte order is numeric order):
//
//	"a" ‖ BE64 epoch ‖ miner                   -> 1 ‖ announce envelope (envelope.go)
//	"e" ‖ BE64 epoch ‖ validator               -> 1 ‖ epoch record envelope (envelope.go)
//	"h" ‖ BE64 epoch ‖ BE64 round ‖ miner      -> record.EncodeHost (host.go)
//	"meta/round_mark"                          -> BE64 round-number mark (roundmark.go)
//	"meta/schema"                              -> BE64 schema version (1)
//	"o" ‖ BE64 epoch ‖ u8 len ‖ signer ‖ ID    -> BE64 receipt ‖ challenge envelope (offschedule.go)
//	"r" ‖ BE64 epoch ‖ BE64 round ‖ miner      -> record.EncodeRound (store.go)
//
// finality.go (final sets, equivocation proofs) and retention.go (scorer
// checkpoints, the pruning bound) add their own key spaces. The round and
// host record encodings are protocol/record's: they are consensus-critical
// (hashed into signed epoch records), so the store keeps their bytes and
// does not define them.
//
// Peer IDs are libp2p peer ID bytes, 1..MaxPeerIDLen of them. Records
// therefore iterate by epoch, then round (round records only), then peer ID
// bytes, a peer ID that is a prefix of another sorting first. The peer ID is
// last and unprefixed: its length is the key's length less 17 (round
// records) or 9 (the others).
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pog-network/pog/protocol/record"
)

// Errors callers can test with errors.Is.
var (
	ErrNotFound = errors.New("store: record not found")
	ErrExists   = errors.New("store: record already exists")
	ErrCorrupt  = errors.New("store: corrupt data")
	ErrClosed   = errors.New("store: closed")
	ErrLocked   = errors.New("store: in use by another process (a running node?)")
	// ErrHeld marks an Open or Close that left a Pebble goroutine stopped at
	// a fault (fault.go) holding the store: this process cannot reopen it.
	ErrHeld = errors.New("store: left open, held until this process exits")
)

// schemaVersion is the key layout and value formats this build reads and
// writes. A store written by a newer build is refused, not misread.
const schemaVersion = 1

// Key tags, the first byte of each kind of key.
const (
	announceTag = 'a'
	epochTag    = 'e'
	recordTag   = 'r'
)

const (
	recordKeyMin = 1 + 8 + 8 + 1
	recordKeyMax = 1 + 8 + 8 + MaxPeerIDLen
)

var schemaKey = []byte("meta/schema")

// Options configures Open.
type Options struct {
	// FS is the filesystem the store lives on; nil means the OS's.
	FS vfs.FS
	// ReadOnly opens an existing store without writing, creating or
	// deleting any file: for tools that read evidence (audit, listings).
	// Writes fail. It needs no write access: where the store's LOCK file
	// cannot be opened for writing, it reads without the lock.
	ReadOnly bool
}

// ErrReadOnly is returned by writes to a store opened ReadOnly.
var ErrReadOnly = errors.New("store: opened read-only")

// Store is an append-only store of evidence. Its methods are safe for
// concurrent use, except that the readers (Round, Rounds, EpochRecord,
// EpochRecords, Announce, Announces) must not overlap Close.
type Store struct {
	db       *pebble.DB
	fs       vfs.FS
	dir      string
	readOnly bool
	closed   atomic.Bool
	faults   *faults

	// mu serialises the writers' check-then-write: Pebble has no
	// compare-and-set, so two writers of one key would both see it absent.
	// It also guards head.
	mu   sync.Mutex
	head *head
	// offMu serialises PutOffSchedule's count and write, so that
	// concurrent keeps of one signer stay within MaxOffSchedule.
	offMu sync.Mutex
}

// Open opens or creates the store in dir. It refuses a store that is
// damaged or lost records (ErrCorrupt; see the head), naming the file.
//
// An existing store is checked read-only first: a writable Pebble open
// replays the WAL into new tables and deletes what it replaced, and must not
// do so to a store that lost records.
func Open(dir string, opts Options) (*Store, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	onDisk, err := readHead(fs, dir)
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return open(dir, lockFreeFS{fs}, true, onDisk)
	}
	if _, err := fs.Stat(dir); err == nil {
		ro, err := open(dir, fs, true, onDisk)
		switch {
		case err == nil:
			if err := ro.Close(); err != nil {
				return nil, err
			}
		case !errors.Is(err, pebble.ErrDBDoesNotExist):
			return nil, err
		}
	}
	return open(dir, fs, false, onDisk)
}

// lockFreeFS lets a read-only open read a store whose LOCK file it cannot
// open for writing (an archived copy on a read-only filesystem, or another
// user's files), which Pebble's read-only open still takes: there it goes
// on without the lock. It writes nothing, so it cannot harm the store.
type lockFreeFS struct{ vfs.FS }

func (fs lockFreeFS) Lock(name string) (io.Closer, error) {
	l, err := fs.FS.Lock(name)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) {
		return noLock{}, nil
	}
	return l, err
}

func (fs lockFreeFS) Unwrap() vfs.FS { return fs.FS }

type noLock struct{}

func (noLock) Close() error { return nil }

// open opens the Pebble database in dir and checks its schema and head.
func open(dir string, fs vfs.FS, readOnly bool, onDisk *head) (*Store, error) {
	f := newFaults()
	// A head that counts records means a database must exist: never let
	// Pebble start an empty one in its place.
	mustExist := readOnly || onDisk != nil && onDisk.counts()
	var db *pebble.DB
	f.opening.Store(true)
	err := f.await(func() (err error) {
		db, err = pebble.Open(dir, &pebble.Options{
			FS: guardedFS{fs, f}, FormatMajorVersion: pebble.FormatNewest, ReadOnly: readOnly, ErrorIfNotExists: mustExist,
			Logger: logger{f}, EventListener: eventListener(f),
		})
		return err
	})
	f.opening.Store(false)
	if _, parked := f.get(); parked && err != nil {
		return nil, fmt.Errorf("store: open %s: %w; %w", dir, classify(err), ErrHeld)
	}
	if errors.Is(err, pebble.ErrDBDoesNotExist) && onDisk != nil {
		return nil, fmt.Errorf("%w: %s: the head %s counts records but Pebble finds no database (MANIFEST or its marker lost?): %w",
			ErrCorrupt, dir, fs.PathJoin(dir, HeadFile), err)
	}
	if errors.Is(err, syscall.EAGAIN) || err != nil && strings.Contains(err.Error(), "lock held") {
		return nil, fmt.Errorf("%w: %s: %w", ErrLocked, dir, err)
	}
	if err != nil && strings.Contains(err.Error(), "WAL") {
		return nil, fmt.Errorf("store: open %s (%s): %w", dir, logFiles(fs, dir), classify(err))
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, classify(err))
	}
	s := &Store{db: db, fs: fs, dir: dir, readOnly: readOnly, faults: f}
	if err := checkSchema(db, dir, readOnly); err != nil {
		return nil, errors.Join(err, s.closeDB())
	}
	if err := s.checkHead(onDisk); err != nil {
		return nil, errors.Join(err, s.closeDB())
	}
	return s, nil
}

// checkSchema writes the schema version into a new store and checks it in
// an existing one.
func checkSchema(db *pebble.DB, dir string, readOnly bool) error {
	v, closer, err := db.Get(schemaKey)
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("store: open %s: %w", dir, classify(err))
	}
	if errors.Is(err, pebble.ErrNotFound) {
		// A store with any key but no version lost its meta key: refuse
		// rather than stamp a version on data of unknown format.
		it, err := db.NewIter(nil)
		if err != nil {
			return fmt.Errorf("store: open %s: %w", dir, classify(err))
		}
		hasRecords := it.First()
		if err := it.Close(); err != nil {
			return fmt.Errorf("store: open %s: %w", dir, classify(err))
		}
		if hasRecords {
			return fmt.Errorf("%w: %s: records present but no schema version", ErrCorrupt, dir)
		}
		if readOnly {
			return nil
		}
		if err := set(db, schemaKey, binary.BigEndian.AppendUint64(nil, schemaVersion), pebble.Sync); err != nil {
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

// Failed is closed at the store's first fault (see fault.go); Err then
// says what it was.
func (s *Store) Failed() <-chan struct{} { return s.faults.done }

// Err is the store's first fault, or nil. It wraps ErrCorrupt for damage,
// which reopening does not cure.
func (s *Store) Err() error {
	err, _ := s.faults.get()
	return err
}

// closeDB closes Pebble, unless one of its goroutines is parked in halt
// holding its locks: then Close would never return, and the store is held
// (ErrHeld) until the process, about to stop anyway, exits.
func (s *Store) closeDB() error {
	var err error
	if _, parked := s.faults.get(); !parked {
		err = s.faults.await(s.db.Close)
	}
	if fault, parked := s.faults.get(); parked { // before Close or during it
		return fmt.Errorf("%w: %s: %w", ErrHeld, s.dir, fault)
	}
	return err
}

// Close closes the store. It waits for a write in progress.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return ErrClosed
	}
	return s.closeDB()
}

// PutRound validates r and writes it durably (fsync). A record is never
// replaced: if one exists for r's (epoch, round, miner), the error wraps
// ErrExists. After a write error the store refuses further writes: the record
// may be visible to Round in this process without being durable. Reopen the
// store to find out whether it survived; it is then complete or absent.
func (s *Store) PutRound(r *RoundRecord) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("store: invalid round record: %w", err)
	}
	desc := describeKey(r.Epoch, r.Round, r.Miner)
	_, err := s.putNew(recordKey(r.Epoch, r.Round, r.Miner), record.EncodeRound(r), pebble.Sync, desc, func([]byte) error {
		return fmt.Errorf("%w: %s", ErrExists, desc)
	})
	return err
}

// writable is the gate every write passes, with s.mu held: the store is
// open, writable, and has not failed a write (after which it may hold
// state that is not durable).
func (s *Store) writable() error {
	switch {
	case s.closed.Load():
		return ErrClosed
	case s.readOnly:
		return ErrReadOnly
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("store: refusing writes after a fault, reopen the store: %w", err)
	}
	return nil
}

// putNew writes key=val with opts if key is absent, reporting whether it
// wrote. If key is present it calls exists with the stored value (valid only
// during the call) and returns its error. desc names the key in errors.
func (s *Store) putNew(key, val []byte, opts *pebble.WriteOptions, desc string, exists func(stored []byte) error) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return false, err
	}
	stored, closer, err := s.db.Get(key)
	if err == nil {
		defer closer.Close()
		return false, exists(stored)
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return false, s.fail(fmt.Errorf("store: %s: %w", desc, err))
	}
	if err := s.faults.await(func() error { return s.db.Set(key, val, opts) }); err != nil {
		return false, s.fail(fmt.Errorf("store: write %s: %w", desc, err))
	}
	if counted(key, opts) {
		if err := s.headAdded(key); err != nil {
			return false, s.fail(fmt.Errorf("store: %s stored, but its head update failed: %w", desc, err))
		}
	}
	return true, nil
}

// fail records err as a fault and returns it, with the store's first fault
// if that was an earlier one: corruption that Pebble's listener reported,
// say, names the damaged file where the read's own error may not.
func (s *Store) fail(err error) error {
	err = classify(err)
	s.faults.record(err)
	if first := s.Err(); !errors.Is(err, first) {
		return fmt.Errorf("%w; first fault: %w", err, first)
	}
	return err
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
	return get(s, recordKey(epoch, round, miner), describeKey(epoch, round, miner), func(v []byte) (*RoundRecord, error) {
		return checkedRecord(epoch, round, miner, v)
	})
}

// get reads key and returns decode's result for its value (valid only
// during the call), or an error wrapping ErrNotFound. desc names the key in
// errors.
func get[T any](s *Store, key []byte, desc string, decode func(v []byte) (T, error)) (T, error) {
	var zero T
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return zero, fmt.Errorf("%w: %s", ErrNotFound, desc)
	}
	if err != nil {
		return zero, s.fail(fmt.Errorf("store: %s: %w", desc, err))
	}
	defer closer.Close()
	return decode(v)
}

// Rounds iterates over the records of epochs fromEpoch..toEpoch inclusive,
// by epoch, round and miner. An error is yielded once, with a nil record,
// and ends the iteration.
func (s *Store) Rounds(fromEpoch, toEpoch uint64) iter.Seq2[*RoundRecord, error] {
	return scan(s, recordTag, fromEpoch, toEpoch, recordKeyMin, recordKeyMax, func(k, v []byte) (*RoundRecord, error) {
		return checkedRecord(binary.BigEndian.Uint64(k[1:9]), binary.BigEndian.Uint64(k[9:17]), k[17:], v)
	})
}

// scan iterates over the keys tag ‖ BE64 epoch ‖ ... of epochs
// fromEpoch..toEpoch inclusive, in key order, yielding decode's result for
// each key and value (valid only during the call). A key whose length is
// outside keyMin..keyMax is corruption. An error is yielded once, with a zero
// T, and ends the iteration.
func scan[T any](s *Store, tag byte, fromEpoch, toEpoch uint64, keyMin, keyMax int, decode func(k, v []byte) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if s.closed.Load() {
			yield(zero, ErrClosed)
			return
		}
		if fromEpoch > toEpoch {
			return
		}
		upper := []byte{tag + 1}
		if toEpoch < math.MaxUint64 {
			upper = epochPrefix(tag, toEpoch+1)
		}
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: epochPrefix(tag, fromEpoch), UpperBound: upper})
		if err != nil {
			yield(zero, s.fail(fmt.Errorf("store: %w", err)))
			return
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if len(k) < keyMin || len(k) > keyMax {
				yield(zero, fmt.Errorf("%w: %q key %x has length %d, want %d..%d", ErrCorrupt, tag, k, len(k), keyMin, keyMax))
				return
			}
			v, err := it.ValueAndErr()
			if err != nil {
				break // it.Error reports it
			}
			r, err := decode(k, v)
			if err != nil {
				yield(zero, err)
				return
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := it.Error(); err != nil {
			yield(zero, s.fail(fmt.Errorf("store: %w", err)))
		}
	}
}

// set writes key=val with opts. A commit reports its fatal error (a failed
// WAL write or sync) through Logger.Fatalf after Pebble's commit pipeline
// has returned, with no Pebble lock held, so the DB can still be read and
// closed afterwards (it takes no more writes).
//
// A NoSync write returns before its WAL write is attempted: if that write
// fails, Pebble reports it to the next Sync write, whose commit fails.
func set(db *pebble.DB, key, val []byte, opts *pebble.WriteOptions) error {
	return guarded(func() error { return db.Set(key, val, opts) })
}

// checkedRecord decodes the value stored under (epoch, round, miner) and
// checks that the record names the same key: a value copied or misdirected
// to another key is corruption, not evidence about that key.
func checkedRecord(epoch, round uint64, miner, v []byte) (*RoundRecord, error) {
	r, err := record.DecodeRound(v)
	if err == nil && (r.Epoch != epoch || r.Round != round || string(r.Miner) != string(miner)) {
		err = fmt.Errorf("value is for %s", describeKey(r.Epoch, r.Round, r.Miner))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, describeKey(epoch, round, miner), err)
	}
	return r, nil
}

func epochPrefix(tag byte, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{tag}, epoch)
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
