package plot

import (
	"os"

	"golang.org/x/sys/unix"
)

// DropCache asks the kernel to drop the plot file's pages from the page
// cache, so that the next reads measure the device (posix_fadvise
// DONTNEED; dirty pages are synced first by Create).
func (pf *File) DropCache() error {
	if err := unix.Fadvise(int(pf.f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return &os.PathError{Op: "posix_fadvise DONTNEED", Path: pf.f.Name(), Err: err}
	}
	return nil
}
