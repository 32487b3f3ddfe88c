package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNodeCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "n")
	code, out, errs := runPog("init", "--home", home, "--profile", "local")
	if code != 0 || !strings.Contains(out, "peer ID") {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
	_, idOut, _ := runPog("id", "--home", home)
	if !strings.HasPrefix(idOut, "12D3KooW") || !strings.Contains(out, strings.TrimSpace(idOut)) {
		t.Fatalf("id %q does not match init's %q", idOut, out)
	}
	t.Setenv("POG_HOME", home)
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "x"), nil, 0o600)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"init", "--home", home}, 1, "refusing to overwrite"},
		{[]string{"init"}, 1, "refusing to overwrite"}, // $POG_HOME is home
		{[]string{"init", "--home", home + "2", "--profile", "huge"}, 2, "unknown profile"},
		{[]string{"id", "--home", empty}, 2, "pog init"},
		{[]string{"run", "--home", home, "--role", "baker"}, 2, "unknown role"},
		{[]string{"run", "--home", home, "--role", "miner", "--listen", "garbage"}, 2, "node.listen"},
		{[]string{"run", "--home", empty, "--role", "miner"}, 2, "pog init"},
		{[]string{"rounds", "--home", home}, 1, "no evidence store"},
		{[]string{"rounds", "--home", home, "extra"}, 2, "unexpected argument"},
		{[]string{"audit", "--home", home, "--since", "-3"}, 2, "--since must be an epoch"},
	}
	for _, tt := range tests {
		code, out, errs := runPog(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("pog %v: exit %d, %q; want exit %d mentioning %q", tt.args, code, out+errs, tt.code, tt.want)
		}
	}
}

// TestOpenBackendFallsBackToCPU: a node configured for a GPU backend that
// cannot open (here, the default build has no cuda backend) mines on the CPU
// and says why; the cpu backend itself must open.
func TestOpenBackendFallsBackToCPU(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	be, err := openBackend("cuda", log)
	if err != nil || be.Name() != "cpu" {
		t.Fatalf("openBackend(cuda) = %v, %v; want the cpu backend", be, err)
	}
	if !strings.Contains(logs.String(), "mining on the CPU instead") || !strings.Contains(logs.String(), `unknown backend`) {
		t.Fatalf("fallback not explained: %s", logs.String())
	}
	if be, err := openBackend("cpu", log); err != nil || be.Name() != "cpu" {
		t.Fatalf("openBackend(cpu) = %v, %v", be, err)
	}
}
