package hw

import (
	"os"

	"golang.org/x/sys/unix"
)

func statFS(dir string) (fsStat, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsStat{}, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	bs := uint64(st.Bsize)
	if st.Frsize > 0 {
		bs = uint64(st.Frsize)
	}
	s := fsStat{total: st.Blocks * bs, free: st.Bavail * bs}
	switch uint32(st.Type) { // Type's width varies by GOARCH
	case unix.TMPFS_MAGIC:
		s.memory, s.kind = true, "tmpfs"
	case unix.RAMFS_MAGIC:
		s.memory, s.kind = true, "ramfs"
	}
	return s, nil
}

// dropCache asks the kernel to drop f's pages from the page cache. f has
// been fsynced, so its pages are clean and can be dropped.
func dropCache(f *os.File) error {
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return &os.PathError{Op: "posix_fadvise DONTNEED", Path: f.Name(), Err: err}
	}
	return nil
}
