package netlab

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestDirBytes counts every file under a directory, nested ones too, and
// nothing beside it.
func TestDirBytes(t *testing.T) {
	fs := vfs.NewMem()
	write := func(name string, n int) {
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, d := range []string{"/store", "/store/archive", "/other"} {
		if err := fs.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("/store/000001.log", 100)
	write("/store/archive/000002.sst", 20)
	write("/other/x", 5)
	if n, err := DirBytes(fs, "/store"); err != nil || n != 120 {
		t.Fatalf("DirBytes = %d, %v; want 120", n, err)
	}
	if _, err := DirBytes(fs, "/missing"); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
