package adversary

import (
	"testing"
	"time"
)

// TestCPULoadWindow: the job runs for exactly 1/loadParts of each epoch,
// in one stretch that differs between epochs.
func TestCPULoadWindow(t *testing.T) {
	l := &Load{Seed: 1, Length: 30 * time.Second}
	starts := map[time.Duration]bool{}
	for e := int64(10); e < 14; e++ {
		var loaded, first time.Duration = 0, -1
		for at := time.Duration(0); at < l.Length; at += time.Millisecond {
			if l.factor(time.Unix(0, e*int64(l.Length)).Add(at)) == loadSlowdown {
				if first < 0 {
					first = at
				}
				loaded += time.Millisecond
			} else if first >= 0 && at < first+l.Length/loadParts {
				t.Fatalf("epoch %d: the job pauses at %v, %v after it started", e, at, at-first)
			}
		}
		if loaded != l.Length/loadParts {
			t.Fatalf("epoch %d: loaded for %v, want %v", e, loaded, l.Length/loadParts)
		}
		starts[first] = true
	}
	if len(starts) < 2 {
		t.Fatalf("the job starts at the same point of every epoch: %v", starts)
	}
	if (*Load)(nil).factor(time.Now()) != 1 {
		t.Fatal("no load slows work")
	}
}
