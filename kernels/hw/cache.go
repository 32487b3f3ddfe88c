package hw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MaxCacheBytes bounds the size of a cached report Load reads.
const MaxCacheBytes = 1 << 20

// Load reads a report saved by Save.
func Load(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCacheBytes+1))
	if err != nil {
		return nil, fmt.Errorf("hw: reading %s: %w", path, err)
	}
	if len(b) > MaxCacheBytes {
		return nil, fmt.Errorf("hw: %s is larger than %d bytes: not a hardware report", path, MaxCacheBytes)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("hw: %s is not a valid hardware report: %w", path, err)
	}
	if r.Measured.IsZero() {
		return nil, fmt.Errorf("hw: %s is not a valid hardware report: no measurement time", path)
	}
	if r.GPUs == nil {
		r.GPUs = []GPU{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	return &r, nil
}

// Save writes r to path as indented JSON, atomically: a reader sees the
// old report or the new one, never a torn file.
func (r *Report) Save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("hw: %w", err)
	}
	if len(b) >= MaxCacheBytes {
		return fmt.Errorf("hw: report of %d bytes exceeds the %d-byte cache bound", len(b), MaxCacheBytes)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("hw: saving report: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("hw: saving report: %w", err)
	}
	return nil
}

// clockSkew is how far in the future a cached report's time may lie.
const clockSkew = time.Minute

// Fresh reports whether r was measured within maxAge of now, in the
// storage directory opts measures. A report from the future (beyond a
// minute of clock skew) is stale.
func (r *Report) Fresh(now time.Time, maxAge time.Duration, opts Options) bool {
	age := now.Sub(r.Measured)
	if age > maxAge || age < -clockSkew {
		return false
	}
	if opts.SkipStorage {
		return true
	}
	dir, err := storageDir(opts.Dir)
	return err == nil && dir == r.Storage.Path
}

// Cached returns the report saved at path if it is Fresh, else measures
// one with opts and saves it there. cached says which. A missing,
// unreadable or corrupt cache is measured anew and replaced (the returned
// report then notes why); a report that was measured but could not be
// saved is returned with the error.
func Cached(ctx context.Context, path string, maxAge time.Duration, opts Options) (r *Report, cached bool, err error) {
	old, lerr := Load(path)
	if lerr == nil && old.Fresh(time.Now(), maxAge, opts) {
		return old, true, nil
	}
	r, err = Measure(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	err = r.Save(path)
	if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
		// Noted after saving: it explains this run, not the saved report.
		r.Notes = append(r.Notes, fmt.Sprintf("cached report ignored and replaced: %v", lerr))
	}
	return r, false, err
}
