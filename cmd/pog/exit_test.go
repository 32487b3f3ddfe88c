package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocumentedExitCodes runs each exit code the operator docs document
// (docs/operator/troubleshooting.md, docs/operator/bench.md) and
// deploy/systemd/pog.service relies on: 2 for usage and configuration
// errors, which the unit does not restart on, with a message naming the
// flag, variable or file at fault and what to do; 1 for failed checks,
// damage and runtime failures; 0 for success.
func TestDocumentedExitCodes(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/systemd/pog.service")
	if err != nil || !strings.Contains(string(unit), "\nRestartPreventExitStatus=2\n") {
		t.Fatalf("the systemd unit no longer prevents restarts on exit 2 (%v)", err)
	}
	dir := t.TempDir()
	home := newHome(t, dir, "home", nil)
	badFile := newHome(t, dir, "bad-file", func(c string) string {
		return strings.Replace(c, "duty_cycle = 0.5", "duty_cycle = 2.0", 1)
	})
	garbage := newHome(t, dir, "garbage", func(string) string { return "[validator\nduty_cycle = \n" })
	badKey := newHome(t, dir, "bad-key", nil)
	os.WriteFile(filepath.Join(badKey, "node.key"), []byte("garbage"), 0o600)
	busy := newHome(t, dir, "busy", nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := "/ip4/127.0.0.1/tcp/" + strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	missing := filepath.Join(dir, "missing")
	cfgOf := func(h string) string { return "config " + filepath.Join(h, "config.toml") }

	tests := []struct {
		name string
		env  []string // KEY=VALUE
		args []string
		code int
		want []string // in the output: the source at fault and the next step
		not  string   // not in the output: a source wrongly blamed
	}{
		{"success", nil, []string{"version"}, 0, []string{"module    github.com/pog-network/pog"}, ""},
		{"help", nil, []string{"--help"}, 0, []string{"commands:"}, ""},
		{"command help", nil, []string{"run", "-h"}, 0, []string{"--role"}, ""},
		{"no arguments", nil, nil, 2, []string{"usage: pog"}, ""},
		{"unknown command", nil, []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}, ""},
		{"bench verified", nil, []string{"bench", "--size", "128", "--tile", "1024", "--quiet"}, 0, nil, ""},
		{"bench verification failed", nil, []string{"bench", "--adversary", "lazy", "--size", "256", "--tile", "4096"}, 1, []string{"tile not computed"}, ""},
		{"bench bad flag", nil, []string{"bench", "--tile", "3000"}, 2, []string{"tile 3000 bytes"}, ""},
		{"flag out of range", nil, []string{"bench", "--workers", "-1"}, 2, []string{"--workers -1"}, ""},
		{"flag out of range", nil, []string{"rounds", "--home", home, "--epoch", "-5"}, 2, []string{"--epoch -5"}, ""},
		{"run without --role", nil, []string{"run", "--home", home}, 2, []string{"--role is required", "--role miner|validator"}, ""},
		{"run with a bad --role", nil, []string{"run", "--home", home, "--role", "baker"}, 2, []string{`"baker"`, "--role miner|validator"}, ""},
		{"run without a home", nil, []string{"run", "--home", missing, "--role", "miner"}, 2, []string{"run 'pog init --home " + missing + "'"}, "no such file"},
		{"id without a home", nil, []string{"id", "--home", missing}, 2, []string{"run 'pog init --home " + missing + "'"}, ""},
		{"bad config.toml value", nil, []string{"run", "--home", badFile, "--role", "validator"}, 2,
			[]string{cfgOf(badFile) + ": validator.duty_cycle = 2: want 0.01 to 1"}, ""},
		{"config.toml does not parse", nil, []string{"run", "--home", garbage, "--role", "validator"}, 2, []string{cfgOf(garbage) + ": toml"}, ""},
		{"bad config.toml value, offline command", nil, []string{"epochs", "--home", badFile}, 2, []string{"validator.duty_cycle = 2"}, ""},
		{"bad config.toml value, peer audit", nil, []string{"audit", "--peer", "/ip4/127.0.0.1/tcp/1/p2p/12D3KooWRrwvZeE6gM5Czd4NqoRLgFdKTewiMzbSZqWraA8tEeeK", "--home", badFile}, 2, []string{"validator.duty_cycle = 2"}, ""},
		{"bad environment value", []string{"POG_VALIDATOR_DUTY_CYCLE=5"}, []string{"run", "--home", home, "--role", "validator"}, 2,
			[]string{"environment POG_VALIDATOR_DUTY_CYCLE: validator.duty_cycle = 5: want 0.01 to 1"}, "config.toml"},
		{"unknown environment variable", []string{"POG_VALIDATOR_DUTY_CYCLES=0.5"}, []string{"run", "--home", home, "--role", "validator"}, 2,
			[]string{"environment POG_VALIDATOR_DUTY_CYCLES: no such config key", "pog env"}, "config.toml"},
		{"bad --listen", nil, []string{"run", "--home", home, "--role", "miner", "--listen", "garbage"}, 2,
			[]string{`flag --listen: node.listen "garbage"`}, "config.toml"},
		{"bad --bootstrap", nil, []string{"run", "--home", home, "--role", "miner", "--bootstrap", "/ip4/127.0.0.1/tcp/1"}, 2,
			[]string{`flag --bootstrap "/ip4/127.0.0.1/tcp/1": want a multiaddr ending in /p2p/<peer id>`}, "config.toml"},
		{"bad --log-level", nil, []string{"run", "--home", home, "--role", "miner", "--log-level", "loud"}, 2,
			[]string{`flag --log-level: node.log_level "loud"`}, "config.toml"},
		{"failed check", nil, []string{"rounds", "--home", home}, 1, []string{"no evidence store"}, ""},
		{"damaged key", nil, []string{"run", "--home", badKey, "--role", "miner"}, 1, []string{filepath.Join(badKey, "node.key") + " is damaged"}, ""},
		{"listen address taken", nil, []string{"run", "--home", busy, "--role", "miner", "--listen", taken}, 1, []string{"cannot start"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kv := range tt.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			code, out, errs := runPog(tt.args...)
			if code != tt.code {
				t.Errorf("pog %v: exit %d, want %d: %s%s", tt.args, code, tt.code, out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("pog %v: output does not say %q: %s%s", tt.args, w, out, errs)
				}
			}
			if tt.not != "" && strings.Contains(out+errs, tt.not) {
				t.Errorf("pog %v: output mentions %q: %s%s", tt.args, tt.not, out, errs)
			}
		})
	}
}

// newHome inits a local-profile home dir/name and passes its config.toml
// through edit, if given.
func newHome(t *testing.T, dir, name string, edit func(string) string) string {
	t.Helper()
	home := filepath.Join(dir, name)
	if code, _, errs := runPog("init", "--home", home, "--profile", "local"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	if edit != nil {
		path := filepath.Join(home, "config.toml")
		b, err := os.ReadFile(path)
		if err == nil {
			err = os.WriteFile(path, []byte(edit(string(b))), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return home
}
