package memwalk

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
)

// WriteFile stores the dataset at path (a new file), its items in order as
// little-endian words, synced: what a miner that keeps its "RAM" on disk
// holds.
func (d *Dataset) WriteFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b [8]byte
	for _, v := range d.words {
		binary.LittleEndian.PutUint64(b[:], v)
		if _, err = w.Write(b[:]); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// DiskSource serves items from a dataset file, one read per item: the
// ram-on-disk miner, for measuring it. Source has no error path, so a
// failed read yields a zero item and is kept for Err.
type DiskSource struct {
	f     *os.File
	items uint64
	err   error
}

// OpenDiskSource opens a dataset file of items items.
func OpenDiskSource(path string, items uint64) (*DiskSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || uint64(st.Size()) != 64*items {
		f.Close()
		return nil, fmt.Errorf("dataset file %s is not %d items", path, items)
	}
	return &DiskSource{f: f, items: items}, nil
}

// Load reads item i from the file.
func (s *DiskSource) Load(i uint64, r *[ItemWords]uint64) {
	var b [64]byte
	if _, err := s.f.ReadAt(b[:], int64(i)*64); err != nil && s.err == nil {
		s.err = fmt.Errorf("reading dataset item %d: %w", i, err)
	}
	for j := range r {
		r[j] = binary.LittleEndian.Uint64(b[8*j:])
	}
}

// Err is the first read error, if any.
func (s *DiskSource) Err() error { return s.err }

// Close closes the file.
func (s *DiskSource) Close() error { return s.f.Close() }
