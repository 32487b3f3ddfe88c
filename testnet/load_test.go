package testnet

import (
	"testing"
	"time"
)

// TestCPULoadWindow: the job runs for exactly 1/loadParts of each epoch,
// in one stretch that differs between epochs.
func TestCPULoadWindow(t *testing.T) {
	l := &cpuLoad{seed: 1, length: 30 * time.Second}
	starts := map[time.Duration]bool{}
	for e := int64(10); e < 14; e++ {
		var loaded, first time.Duration = 0, -1
		for at := time.Duration(0); at < l.length; at += time.Millisecond {
			if l.factor(time.Unix(0, e*int64(l.length)).Add(at)) == loadSlowdown {
				if first < 0 {
					first = at
				}
				loaded += time.Millisecond
			} else if first >= 0 && at < first+l.length/loadParts {
				t.Fatalf("epoch %d: the job pauses at %v, %v after it started", e, at, at-first)
			}
		}
		if loaded != l.length/loadParts {
			t.Fatalf("epoch %d: loaded for %v, want %v", e, loaded, l.length/loadParts)
		}
		starts[first] = true
	}
	if len(starts) < 2 {
		t.Fatalf("the job starts at the same point of every epoch: %v", starts)
	}
	if (*cpuLoad)(nil).factor(time.Now()) != 1 {
		t.Fatal("no load slows work")
	}
}

// TestLoadedMinerEarnsLikeItsTwin runs two identical CPU miners, one with
// a CPU job beside it for a third of every epoch (slowing its host CPU
// and its device 4×), in virtual time: their weights stay within 10 % in
// every epoch.
func TestLoadedMinerEarnsLikeItsTwin(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs = 2, 1, 3
	cfg.Profiles, cfg.Adversaries = []string{"CPU"}, []string{"loaded"}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	if c := loadedCheck(s); !c.OK {
		t.Fatalf("%s: %s", c.Name, c.Detail)
	} else {
		t.Log(c.Detail)
	}
}
