package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTestnetBadDelay: a malformed --delay is a usage error, reported
// before any node starts.
func TestTestnetBadDelay(t *testing.T) {
	for _, arg := range []string{"far", "far=soon", "far=-5ms"} {
		var out, errb bytes.Buffer
		if code := runTestnet([]string{"--delay", arg, "--out", t.TempDir()}, &out, &errb); code != 2 {
			t.Errorf("--delay %s: exit %d, want 2 (%s)", arg, code, errb.String())
		}
		if !strings.Contains(errb.String(), "--delay") {
			t.Errorf("--delay %s: error does not name the flag: %q", arg, errb.String())
		}
	}
}
