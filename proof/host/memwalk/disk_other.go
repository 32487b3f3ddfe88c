//go:build !linux

package memwalk

import "errors"

// DropCache is not supported here: reads may come from the page cache.
func (s *DiskSource) DropCache() error {
	return errors.New("dropping the page cache is supported on Linux only")
}
