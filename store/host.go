package store

import (
	"fmt"
	"iter"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pog-network/pog/protocol/record"
)

// Host records (SPEC §23.8) are stored under
//
//	"h" ‖ BE64 epoch ‖ BE64 round ‖ miner -> record.EncodeHost
//
// Round numbers are the validator's, shared with its round records. Host
// records are not counted in the head (like announces) and are pruned with
// the round records.
const hostTag = 'h'

func hostKey(epoch, round uint64, miner []byte) []byte {
	k := recordKey(epoch, round, miner)
	k[0] = hostTag
	return k
}

// PutHost stores a host record, never replacing one: a record already
// stored under its (epoch, round, miner) is an error wrapping ErrExists.
func (s *Store) PutHost(r *HostRecord) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("store: invalid host record: %w", err)
	}
	desc := "host " + describeKey(r.Epoch, r.Round, r.Miner)
	_, err := s.putNew(hostKey(r.Epoch, r.Round, r.Miner), record.EncodeHost(r), pebble.Sync, desc, func([]byte) error {
		return fmt.Errorf("%w: %s", ErrExists, desc)
	})
	return err
}

// HostRounds iterates over the host records of epochs fromEpoch..toEpoch
// inclusive, by epoch, round and miner; a value that does not decode, or
// names another key, is ErrCorrupt. An error is yielded once and ends the
// iteration.
func (s *Store) HostRounds(fromEpoch, toEpoch uint64) iter.Seq2[*HostRecord, error] {
	return scan(s, hostTag, fromEpoch, toEpoch, recordKeyMin, recordKeyMax, func(k, v []byte) (*HostRecord, error) {
		r, err := record.DecodeHost(v)
		if err == nil && string(hostKey(r.Epoch, r.Round, r.Miner)) != string(k) {
			err = fmt.Errorf("value is for %s", describeKey(r.Epoch, r.Round, r.Miner))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: host key %x: %v", ErrCorrupt, k, err)
		}
		return r, nil
	})
}
