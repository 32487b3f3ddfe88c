package node

import (
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
