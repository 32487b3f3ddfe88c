//go:build !linux

package plot

import "errors"

// DropCache is not supported here: reads may come from the page cache.
func (pf *File) DropCache() error {
	return errors.New("dropping the page cache is supported on Linux only")
}
