package store

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// roundMarkKey holds the validator's round-number mark: every number it
// handed out is at most the mark, stored or not. A round its own shutdown
// interrupted stores no record, so without the mark a restarted validator
// would hand that number out again, to the same miner.
var roundMarkKey = []byte("meta/round_mark")

// RoundMark returns the round-number mark (0 if none was set).
func (s *Store) RoundMark() (uint64, error) { return s.metaUint64(roundMarkKey, "round mark") }

// RaiseRoundMark durably raises the mark to n; a lower n leaves it.
func (s *Store) RaiseRoundMark(n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	if m, err := s.RoundMark(); err != nil || n <= m {
		return err
	}
	if err := s.faults.await(func() error { return set(s.db, roundMarkKey, binary.BigEndian.AppendUint64(nil, n), pebble.Sync) }); err != nil {
		return s.fail(fmt.Errorf("store: write round mark: %w", err))
	}
	return nil
}
