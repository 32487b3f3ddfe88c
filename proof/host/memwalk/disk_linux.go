package memwalk

import (
	"os"

	"golang.org/x/sys/unix"
)

// DropCache asks the kernel to drop the file's pages from the page cache,
// so that reads measure the device (posix_fadvise DONTNEED).
func (s *DiskSource) DropCache() error {
	if err := unix.Fadvise(int(s.f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return &os.PathError{Op: "posix_fadvise DONTNEED", Path: s.f.Name(), Err: err}
	}
	return nil
}
