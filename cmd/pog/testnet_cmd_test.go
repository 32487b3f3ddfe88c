package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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

// TestTestnetCPUProfile: pog testnet --cpuprofile writes a profile of a
// simulated run (gzipped, as pprof writes them), and refuses a run in
// real time, which it does not profile.
func TestTestnetCPUProfile(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runTestnet([]string{"--cpuprofile", "p", "--sim=false", "--out", t.TempDir()}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--cpuprofile") {
		t.Errorf("--cpuprofile in real time: exit %d, want 2 naming the flag (%s)", code, errb.String())
	}
	bin := buildPog(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	cmd := exec.Command(bin, "testnet", "--validators", "1", "--miners", "1", "--epochs", "1", "--epoch-length", "5s",
		"--cpuprofile", prof, "--out", filepath.Join(dir, "out"))
	if b, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("pog testnet: %v\n%s", err, b)
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile %s: %d bytes, err %v; want a gzipped pprof profile", prof, len(b), err)
	}
}
