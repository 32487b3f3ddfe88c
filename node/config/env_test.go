package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// Every key config.toml can hold has exactly one variable: the keys come
// from encoding the config, not from the reflection EnvVars uses.
func TestEnvVarsCoverEveryKey(t *testing.T) {
	var buf bytes.Buffer
	c := DefaultConfig()
	c.Node.Bootstrap, c.Network.Validators = []string{}, []string{}
	if err := toml.NewEncoder(&buf).Encode(c); err != nil {
		t.Fatal(err)
	}
	var tree map[string]map[string]any
	if _, err := toml.Decode(buf.String(), &tree); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for sec, kv := range tree {
		for k := range kv {
			keys = append(keys, sec+"."+k)
		}
	}
	var got []string
	names := map[string]bool{}
	for _, v := range EnvVars() {
		got = append(got, v.Key)
		if names[v.Name] {
			t.Errorf("two keys map to %s", v.Name)
		}
		names[v.Name] = true
		if v.Name != EnvName(v.Key) {
			t.Errorf("%s: variable %s", v.Key, v.Name)
		}
	}
	slices.Sort(keys)
	slices.Sort(got)
	if !slices.Equal(keys, got) {
		t.Fatalf("config keys %v\nenv keys    %v", keys, got)
	}
}

func TestApplyEnv(t *testing.T) {
	c, o := DefaultConfig(), Origins{}
	err := ApplyEnv(&c, []string{
		"POG_MINER_QUEUE_LENGTH=9",
		"POG_NODE_LISTEN=/ip4/0.0.0.0/tcp/5001, /ip4/0.0.0.0/udp/5001/quic-v1",
		"POG_NODE_BOOTSTRAP=",
		"POG_NODE_MDNS=true",
		"POG_NODE_PROOF_STREAM_MEMORY=0x4000000",
		"POG_VALIDATOR_DETECT_FRACTION=0.25",
		"POG_VALIDATOR_SIZE=512",
		"POG_MINER_PROOF_WINDOW=90s",
		"POG_NETWORK_GENESIS=genesis.toml",
		"POG_HOME=/elsewhere", "PATH=/bin", "POGO_MINER_WORKERS=3",
	}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Miner.QueueLength = 9
	want.Node.Listen = []string{"/ip4/0.0.0.0/tcp/5001", "/ip4/0.0.0.0/udp/5001/quic-v1"}
	want.Node.Bootstrap = []string{}
	want.Node.MDNS = true
	want.Node.ProofStreamMemory = 64 << 20
	want.Validator.DetectFraction = 0.25
	want.Validator.Size = 512
	want.Miner.ProofWindow = Duration{90 * time.Second}
	want.Network.Genesis = "genesis.toml"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	if len(o) != 9 || o["miner.queue_length"] != "environment POG_MINER_QUEUE_LENGTH" {
		t.Fatalf("origins %v", o)
	}
}

func TestApplyEnvErrors(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"POG_MINER_QUEUE_LENGTH=four", "POG_MINER_QUEUE_LENGTH (miner.queue_length): want an integer"},
		{"POG_MINER_QUEUE_LENGHT=4", "POG_MINER_QUEUE_LENGHT: no such config key"},
		{"POG_VALIDATOR_SIZE=-1", "want a non-negative integer"},
		{"POG_VALIDATOR_SIZE=4294967296", "want a non-negative integer"},
		{"POG_NODE_MDNS=yes please", "want true or false"},
		{"POG_MINER_PROOF_WINDOW=soon", "POG_MINER_PROOF_WINDOW (miner.proof_window)"},
		{"POG_VALIDATOR_DETECT_FRACTION=a lot", "want a number"},
	} {
		c := DefaultConfig()
		if err := ApplyEnv(&c, []string{tt.env}, Origins{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.env, err, tt.want)
		}
	}
}

// Precedence: environment over config.toml over the defaults; LoadConfig
// validates the result, so a bad override is refused like a bad file.
func TestLoadConfigEnvPrecedence(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ConfigFile), []byte("[miner]\nqueue_length = 3\nworkers = 2\n"), 0o644)
	t.Setenv("POG_MINER_QUEUE_LENGTH", "7")
	c, err := LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if c.Miner.QueueLength != 7 || c.Miner.Workers != 2 || c.Miner.Backend != "cpu" {
		t.Fatalf("queue_length %d (want env 7), workers %d (want file 2), backend %q (want default cpu)",
			c.Miner.QueueLength, c.Miner.Workers, c.Miner.Backend)
	}
	t.Setenv("POG_MINER_QUEUE_LENGTH", "0")
	if _, err := LoadConfig(home); err == nil || !strings.HasPrefix(err.Error(), "environment POG_MINER_QUEUE_LENGTH: miner.queue_length = 0") {
		t.Fatalf("queue_length 0 from the environment: %v", err)
	}
}
