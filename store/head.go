package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble tolerates a torn tail in its newest WAL and, given a damaged or
// missing MANIFEST marker, starts an empty database: either way records
// vanish without an error. The head is the store's own account of what it
// holds, kept outside Pebble in HeadFile and rewritten (fsync, rename, fsync
// of the directory) after every synced record, so Open can tell a store that
// lost records from a complete one.
//
// Per chain (the round records; each validator's chain of epoch records)
// it holds the number of records, the greatest key (the chain's last
// record) and the greatest round (round records) or epoch (epoch records)
// number. Open refuses a store holding fewer records of a chain, or lacking
// that key or number. A crash between a record and its head update leaves
// the store ahead of the head, which is fine; Open brings the head up to
// date. Announces are not synced (see PutAnnounce) and not counted.
//
// Pruning (PruneEvidence) lowers the round records' chain through
// headPruned before it deletes them, or the next Open would report the
// deletion as loss. Epoch records are kept for good.

// HeadFile is the head's name inside the store's directory. Pebble ignores
// files whose names it does not know.
const HeadFile = "POG-HEAD"

// headMetaKey, present in Pebble, says that a head file was written: a
// missing head file is then damage, not a store from before heads.
var headMetaKey = []byte("meta/head")

const headVersion = 1

// maxHeadBytes bounds the head: about 200 bytes per validator.
const maxHeadBytes = 4 << 20

// chainHead is one chain's part of the head.
type chainHead struct {
	Count uint64 `json:"count"`
	Last  string `json:"last,omitempty"` // hex of the greatest key
	Max   uint64 `json:"max"`            // greatest round (round records) or epoch (epoch records)
}

// head is the content of HeadFile.
type head struct {
	Version int       `json:"version"`
	Rounds  chainHead `json:"rounds"`
	// Epochs are the epoch record chains by validator (peer ID bytes, hex).
	Epochs map[string]chainHead `json:"epochs"`
}

func newHead() *head { return &head{Version: headVersion, Epochs: map[string]chainHead{}} }

func (h *head) clone() *head {
	c := *h
	c.Epochs = maps.Clone(h.Epochs)
	return &c
}

func (h *head) equal(o *head) bool {
	return h.Version == o.Version && h.Rounds == o.Rounds && maps.Equal(h.Epochs, o.Epochs)
}

// counts reports whether h counts any record.
func (h *head) counts() bool {
	for _, c := range h.Epochs {
		if c.Count > 0 {
			return true
		}
	}
	return h.Rounds.Count > 0
}

// add counts a new record stored under key.
func (h *head) add(key []byte) {
	if key[0] == recordTag {
		h.Rounds.add(key)
		return
	}
	v := hex.EncodeToString(key[9:])
	c := h.Epochs[v]
	c.add(key)
	h.Epochs[v] = c
}

func (c *chainHead) add(key []byte) {
	c.Count++
	if hk := hex.EncodeToString(key); hk > c.Last {
		c.Last = hk // hex preserves byte order
	}
	if n := keyNumber(key); n > c.Max {
		c.Max = n
	}
}

// keyNumber is the round of a round record's key, or the epoch of an epoch
// record's.
func keyNumber(key []byte) uint64 {
	if key[0] == recordTag {
		return binary.BigEndian.Uint64(key[9:17])
	}
	return binary.BigEndian.Uint64(key[1:9])
}

// counted reports whether writes under key are counted in the head.
func counted(key []byte, opts *pebble.WriteOptions) bool {
	return opts == pebble.Sync && len(key) > 0 && (key[0] == recordTag || key[0] == epochTag)
}

// encodeHead is the JSON of h followed by a line with its SHA-256, so that a
// damaged head is refused rather than trusted.
func encodeHead(h *head) []byte {
	b, _ := json.Marshal(h)
	sum := sha256.Sum256(b)
	return fmt.Appendf(b, "\nsha256 %x\n", sum)
}

func decodeHead(b []byte) (*head, error) {
	body, sumLine, ok := bytes.Cut(b, []byte("\n"))
	sum := sha256.Sum256(body)
	if !ok || string(sumLine) != fmt.Sprintf("sha256 %x\n", sum) {
		return nil, errors.New("checksum mismatch")
	}
	h := newHead()
	if err := json.Unmarshal(body, h); err != nil {
		return nil, err
	}
	if h.Version != headVersion {
		return nil, fmt.Errorf("version %d, want %d", h.Version, headVersion)
	}
	if h.Epochs == nil {
		h.Epochs = map[string]chainHead{} // "epochs": null
	}
	return h, nil
}

// readHead reads dir's head; nil if there is none.
func readHead(fs vfs.FS, dir string) (*head, error) {
	path := fs.PathJoin(dir, HeadFile)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: head %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHeadBytes+1))
	if err == nil && len(b) > maxHeadBytes {
		err = fmt.Errorf("more than %d bytes", maxHeadBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("store: head %s: %w", path, err)
	}
	h, err := decodeHead(b)
	if err != nil {
		return nil, fmt.Errorf("%w: head %s: %v", ErrCorrupt, path, err)
	}
	return h, nil
}

// writeHead replaces dir's head durably: a temporary file, synced, renamed
// over the head, and the directory synced.
func writeHead(fs vfs.FS, dir string, h *head) error {
	path := fs.PathJoin(dir, HeadFile)
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("store: head %s: %w", tmp, err)
	}
	_, err = f.Write(encodeHead(h))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(fs, dir)
	}
	if err != nil {
		return fmt.Errorf("store: head %s: %w", path, err)
	}
	return nil
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// tally counts what the store holds, as a head. Reading every record key
// and value also checks the checksums of every block that holds them.
func tally(db *pebble.DB) (*head, error) {
	h := newHead()
	for _, tag := range []byte{recordTag, epochTag} {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{tag}, UpperBound: []byte{tag + 1}})
		if err != nil {
			return nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if len(k) < 1+8+8 && tag == recordTag || len(k) < 1+8 {
				continue // scan reports bad keys where they are read
			}
			if _, err := it.ValueAndErr(); err != nil {
				break
			}
			h.add(k)
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// checkHead compares the head on disk (nil: none) with what the store
// holds, and, writable, brings the head up to date.
func (s *Store) checkHead(onDisk *head) error {
	have, err := tally(s.db)
	if err != nil {
		return s.fail(fmt.Errorf("store: %s: reading records: %w", s.dir, err))
	}
	_, closer, err := s.db.Get(headMetaKey)
	marked := err == nil
	if marked {
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("store: %s: %w", s.dir, classify(err))
	}
	path := s.fs.PathJoin(s.dir, HeadFile)
	switch {
	case onDisk == nil && marked:
		return fmt.Errorf("%w: %s is missing: this store cannot tell whether it lost records", ErrCorrupt, path)
	case onDisk != nil:
		if err := s.compareHead(onDisk, have, path); err != nil {
			return err
		}
	}
	s.head = have
	if s.readOnly || (onDisk != nil && onDisk.equal(have)) {
		return nil
	}
	if err := writeHead(s.fs, s.dir, have); err != nil {
		return err
	}
	if !marked {
		return guarded(func() error { return s.db.Set(headMetaKey, []byte{1}, pebble.Sync) })
	}
	return nil
}

func (s *Store) compareHead(want, have *head, path string) error {
	type pair struct {
		what       string
		want, have chainHead
	}
	chains := []pair{{"round records", want.Rounds, have.Rounds}}
	vs := slices.Sorted(maps.Keys(want.Epochs))
	for _, v := range vs {
		chains = append(chains, pair{"epoch records of validator " + v, want.Epochs[v], have.Epochs[v]})
	}
	for _, c := range chains {
		lost := c.have.Count < c.want.Count || c.have.Max < c.want.Max
		if !lost && c.want.Last != "" {
			k, _ := hex.DecodeString(c.want.Last)
			_, closer, err := s.db.Get(k)
			if err == nil {
				closer.Close()
			} else if errors.Is(err, pebble.ErrNotFound) {
				lost = true
			} else {
				return fmt.Errorf("store: %s: %w", s.dir, classify(err))
			}
		}
		if lost {
			return fmt.Errorf("%w: %s lost %s: %s counts %d (greatest key %s, greatest number %d), the store holds %d (greatest number %d); "+
				"a damaged WAL or MANIFEST (%s) is the usual cause: restore the store from a backup or resync it",
				ErrCorrupt, s.dir, c.what, path, c.want.Count, c.want.Last, c.want.Max, c.have.Count, c.have.Max, logFiles(s.fs, s.dir))
		}
	}
	return nil
}

// headAdded counts a synced write under key and rewrites the head. It runs
// under s.mu.
func (s *Store) headAdded(key []byte) error {
	next := s.head.clone()
	next.add(key)
	if err := writeHead(s.fs, s.dir, next); err != nil {
		return err
	}
	s.head = next
	return nil
}

// headPruned sets the round records' chain to those of epochs from below
// on, the records PruneEvidence keeps. It runs under s.mu.
func (s *Store) headPruned(below uint64) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: epochPrefix(recordTag, below), UpperBound: []byte{recordTag + 1}})
	if err != nil {
		return err
	}
	var kept chainHead
	for ok := it.First(); ok; ok = it.Next() {
		if k := it.Key(); len(k) >= recordKeyMin {
			kept.add(k)
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	next := s.head.clone()
	next.Rounds = kept
	if err := writeHead(s.fs, s.dir, next); err != nil {
		return err
	}
	s.head = next
	return nil
}

// logFiles names the WAL and MANIFEST files in dir, for errors about them.
func logFiles(fs vfs.FS, dir string) string {
	names, _ := fs.List(dir)
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") || strings.HasPrefix(n, "MANIFEST-") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// EpochChain is what the store holds of one validator's epoch records:
// how many, and the latest epoch among them.
type EpochChain struct {
	Validator []byte // peer ID bytes
	Count     uint64
	Latest    uint64
}

// EpochChains lists each validator's epoch records as the head counts
// them, by validator bytes, without reading a record. Records are never
// deleted, so the counts' sum grows with every new one: whoever caches
// what it derives from them can tell when that is stale.
func (s *Store) EpochChains() []EpochChain {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head == nil {
		return nil
	}
	out := make([]EpochChain, 0, len(s.head.Epochs))
	for _, v := range slices.Sorted(maps.Keys(s.head.Epochs)) {
		b, err := hex.DecodeString(v)
		if err != nil {
			continue // tally and add write only hex
		}
		c := s.head.Epochs[v]
		out = append(out, EpochChain{Validator: b, Count: c.Count, Latest: c.Max})
	}
	return out
}
