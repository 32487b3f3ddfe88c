package testnet

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHeartbeatWritesHeapProfile: each progress line rewrites the heap
// profile whole, so a run killed before its end leaves one.
func TestHeartbeatWritesHeapProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	var progress bytes.Buffer
	r := &run{cfg: Config{HeapProfile: path, Progress: &progress}, start: time.Now(), wallStart: wallNow()}
	for range 2 {
		r.heartbeat(time.Now().Add(time.Minute))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gzip.NewReader(f); err != nil {
			t.Errorf("heap profile: %v", err)
		}
		f.Close()
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary profile left behind: %v", err)
	}
	if n := strings.Count(progress.String(), "running: "); n != 2 || strings.Contains(progress.String(), "warning") {
		t.Errorf("progress:\n%s", progress.String())
	}
}
