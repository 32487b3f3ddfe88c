package testnet

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLateJoinerTestnet runs three full epochs; a node started two epochs
// late must hold every earlier record within one epoch, compute the same
// consensus as a validator and pass audit.
func TestLateJoinerTestnet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a network for about 30 s")
	}
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs, cfg.EpochLength = 2, 2, 3, 6*time.Second
	shortEpochs(&cfg)
	cfg.Profiles = []string{"H200", "A100"}
	cfg.Out = t.TempDir()
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range s.Checks {
		mine := strings.Contains(c.Name, "late joiner")
		if mine {
			seen++
		}
		if (mine || c.Name == "identical consensus on every node" || c.Name == "every node holds every validator's epoch records") && !c.OK {
			t.Errorf("check failed: %s: %s", c.Name, c.Detail)
		}
	}
	if seen != 3 {
		t.Fatalf("%d late-joiner checks in the report, want 3", seen)
	}
	late := false
	for _, n := range s.Nodes {
		late = late || n.Name == lateJoinName
	}
	if !late {
		t.Fatal("the late joiner is not among the report's nodes")
	}
}
