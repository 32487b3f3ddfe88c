package store

import "github.com/cockroachdb/pebble/v2"

// Tamper runs fn with the store's underlying Pebble database, for tests and
// fault drills that must damage or forge evidence on disk to check that
// audits catch it. It is not part of the store's contract: everything the
// append-only API guarantees is void for a store fn writes to.
//
// Writes are serialised with the store's own: fn runs while no other write
// is in progress, and must not call the Store's methods (it would deadlock).
// Keys and values are as the package documentation lays out; whether fn's
// writes are synced is its own business (pebble.Sync for a drill that
// reopens). To replace a round record with a forged one, delete its key
// (RoundKey) in fn, then PutRound the forgery.
//
// Tampering is deliberate, not loss: afterwards the head (head.go) is
// recounted from what the store holds, so that the next Open accepts the
// tampered store and the audit, not Open, has to catch the forgery.
func (s *Store) Tamper(fn func(db *pebble.DB) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if s.readOnly {
		return ErrReadOnly
	}
	if err := fn(s.db); err != nil {
		return err
	}
	h, err := tally(s.db)
	if err != nil {
		return err
	}
	if err := writeHead(s.fs, s.dir, h); err != nil {
		return err
	}
	s.head = h
	return nil
}

// RoundKey returns the key of the round record for (epoch, round, miner),
// for use with Tamper.
func RoundKey(epoch, round uint64, miner []byte) []byte { return recordKey(epoch, round, miner) }

// EpochRecordKey returns the key of the epoch record for (epoch, validator),
// for use with Tamper.
func EpochRecordKey(epoch uint64, validator []byte) []byte {
	return envelopeKey(epochTag, epoch, validator)
}

// AnnounceKey returns the key of the announce for (epoch, miner), for use
// with Tamper.
func AnnounceKey(epoch uint64, miner []byte) []byte { return envelopeKey(announceTag, epoch, miner) }
