package store

import "fmt"

// Bytes is the size of every key and value the store holds: what a node
// keeps, whatever the state of its logs and compactions (the files on
// its disk).
func (s *Store) Bytes() (int64, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return 0, fmt.Errorf("store: size: %w", classify(err))
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return n, fmt.Errorf("store: size: %w", classify(err))
		}
		n += int64(len(it.Key()) + len(v))
	}
	if err := it.Close(); err != nil {
		return n, fmt.Errorf("store: size: %w", classify(err))
	}
	return n, nil
}
