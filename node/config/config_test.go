package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigRoundTrip(t *testing.T) {
	for name, mk := range Profiles {
		home := t.TempDir()
		if err := WriteConfig(home, mk(), name); err != nil {
			t.Fatal(err)
		}
		got, err := LoadConfig(home)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := mk(); got.Validator != want.Validator || got.Miner != want.Miner || got.Network.TrustAnyValidator != want.Network.TrustAnyValidator {
			t.Errorf("%s: loaded config differs", name)
		}
		if WriteConfig(home, mk(), name) == nil {
			t.Errorf("%s: overwrote an existing config", name)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{"[validator]\nsize = 'big'\n", "size"},
		{"[validator]\nsizee = 4\n", "unknown setting"},
		{"[validator]\ntile_bytes = 3000\n", "tile_bytes"},
		{"[validator]\nprecision = 'fp16'\n", "unknown setting"}, // validators no longer choose one
		{"[node]\nlisten = ['not a multiaddr']\n", "node.listen"},
		{"[node]\nbootstrap = ['/ip4/127.0.0.1/tcp/1']\n", "node.bootstrap"},
		{"[network]\nvalidators = ['nope']\n", "network.validators"},
		{"[miner]\nannounce_interval = 'soon'\n", "announce_interval"},
		{"[node]\nlog_level = 'loud'\n", "log_level"},
	}
	for _, tt := range tests {
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, ConfigFile), []byte(tt.body), 0o644)
		if _, err := LoadConfig(home); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("config %q: got %v, want an error about %s", tt.body, err, tt.want)
		}
	}
	if _, err := LoadConfig(t.TempDir()); err == nil {
		t.Error("missing config accepted")
	}
}

func TestKeyFile(t *testing.T) {
	home := t.TempDir()
	if _, err := LoadKey(home); err == nil || !strings.Contains(err.Error(), "pog init") {
		t.Fatalf("missing key: %v", err)
	}
	key, err := CreateKey(home)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(home, KeyFile))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v", st.Mode().Perm())
	}
	got, err := LoadKey(home)
	if err != nil || !got.Equals(key) {
		t.Fatalf("reload: %v", err)
	}
	if _, err := CreateKey(home); err == nil {
		t.Fatal("overwrote a key")
	}
	os.Chmod(filepath.Join(home, KeyFile), 0o644)
	if _, err := LoadKey(home); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key: %v", err)
	}
	os.Chmod(filepath.Join(home, KeyFile), 0o600)
	os.WriteFile(filepath.Join(home, KeyFile), []byte("garbage"), 0o600)
	if _, err := LoadKey(home); err == nil {
		t.Fatal("garbage key accepted")
	}
}

// Every error loading a config is a *Error, and a bad setting is
// blamed on where it was given: the file, an environment variable, or for
// a relation where each side was given (not a side left at its default).
func TestConfigErrorOrigin(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ConfigFile)
	tests := []struct {
		body string
		env  map[string]string
		want string
	}{
		{"[validator]\nduty_cycle = 2.0\n", nil, "config " + path + ": validator.duty_cycle = 2: want 0.01 to 1"},
		{"[validator]\nduty_cycle = 0.5\n", map[string]string{"POG_VALIDATOR_DUTY_CYCLE": "5"}, "environment POG_VALIDATOR_DUTY_CYCLE: validator.duty_cycle = 5:"},
		{"[validator]\nmax_steps = 30\n", map[string]string{"POG_VALIDATOR_MIN_STEPS": "40"},
			"config " + path + " and environment POG_VALIDATOR_MIN_STEPS: validator.max_steps 30 < validator.min_steps 40"},
		{"", map[string]string{"POG_VALIDATOR_MIN_STEPS": "80"}, "environment POG_VALIDATOR_MIN_STEPS: validator.max_steps 64 < validator.min_steps 80"},
		{"[validator]\nduty_cycle = 'half'\n", nil, "config " + path + ": toml"},
		{"[validator]\nduty_cycles = 0.5\n", nil, "config " + path + ": unknown setting"},
		{"", map[string]string{"POG_VALIDATOR_DUTY_CYCLES": "0.5"}, "environment POG_VALIDATOR_DUTY_CYCLES: no such config key"},
	}
	for _, tt := range tests {
		os.WriteFile(path, []byte(tt.body), 0o644)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		_, err := LoadConfig(home)
		if _, ok := errors.AsType[*Error](err); !ok || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q with %v: got %v, want a config.Error starting %q", tt.body, tt.env, err, tt.want)
		}
		for k := range tt.env {
			os.Unsetenv(k)
		}
	}
	_, err := LoadConfig(filepath.Join(home, "none"))
	if _, ok := errors.AsType[*Error](err); !ok || !strings.Contains(err.Error(), "run 'pog init --home "+filepath.Join(home, "none")+"' first") {
		t.Errorf("missing home: %v", err)
	}
}
