//go:build unix

package config

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestKeyFIFO: a FIFO as node.key or config.toml is refused at once; opening
// it for reading would block until a writer came.
func TestKeyFIFO(t *testing.T) {
	for _, name := range []string{KeyFile, ConfigFile} {
		home := t.TempDir()
		path := filepath.Join(home, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		if name == KeyFile {
			_, err = LoadKey(home)
		} else {
			_, err = LoadConfig(home)
		}
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO as %s: %v, want refused", name, err)
		}
	}
}
