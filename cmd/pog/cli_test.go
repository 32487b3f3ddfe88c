package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/node/config"
)

func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errs := runPog(args...)
		if code != 0 || errs != "" || !strings.Contains(out, "commands:") || !strings.Contains(out, "  version ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
		if strings.Contains(out, "testnet-node") {
			t.Errorf("%v: the internal testnet-node is listed:\n%s", args, out)
		}
	}
	if code, out, errs := runPog(); code != 2 || out != "" || !strings.Contains(errs, "commands:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, _ := runPog("help", "rounds"); code != 0 || !strings.Contains(out, "--epoch") {
		t.Errorf("pog help rounds: exit %d, %q", code, out)
	}
}

// Every command's -h goes to stdout with exit 0, and each flag states its
// default at most once and never as a sentinel.
func TestCommandHelp(t *testing.T) {
	for name := range commands {
		for _, h := range []string{"-h", "--help"} {
			code, out, errs := runPog(name, h)
			if code != 0 || errs != "" || !strings.Contains(out, "usage: pog "+name) {
				t.Errorf("pog %s %s: exit %d, stdout %q, stderr %q", name, h, code, out, errs)
				continue
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Count(line, "(default") > 1 || strings.Contains(line, "(default -1)") {
					t.Errorf("pog %s: flag help %q", name, strings.TrimSpace(line))
				}
			}
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, errs := runPog("version", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v buildVersion
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Go != runtime.Version() || v.CUDA || !slices.Contains(v.Backends, "cpu") || v.Commit == "" || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("version %+v", v)
	}
	if code, out, _ := runPog("version"); code != 0 || !strings.Contains(out, "cuda      no") || !strings.Contains(out, "go        "+runtime.Version()) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// Without --home, commands use $POG_HOME.
func TestPOGHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "h")
	t.Setenv(config.EnvHome, home)
	if code, _, errs := runPog("init", "--profile", "local"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	code, out, _ := runPog("id")
	_, want, _ := runPog("id", "--home", home)
	if code != 0 || out != want || !strings.HasPrefix(out, "12D3KooW") {
		t.Fatalf("id: exit %d %q, want %q", code, out, want)
	}
	t.Setenv("POG_MINER_QUEUE_LENGTH", "11")
	if _, out, _ := runPog("env"); !regexpLine(out, "POG_MINER_QUEUE_LENGTH", "miner.queue_length", "int", "11") {
		t.Fatalf("pog env does not show the set value:\n%s", out)
	}
}

func regexpLine(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if slices.Equal(strings.Fields(line), fields) {
			return true
		}
	}
	return false
}

// pog init --network turns a network file into config and genesis; a bad
// file leaves the home untouched.
func TestInitNetwork(t *testing.T) {
	dir := t.TempDir()
	val := filepath.Join(dir, "validator")
	runPog("init", "--home", val, "--profile", "local")
	_, id, _ := runPog("id", "--home", val)
	id = strings.TrimSpace(id)
	netFile := filepath.Join(dir, "test.toml")
	os.WriteFile(netFile, []byte(`name = "test"
profile = "local"
epoch_length = "30s"
bootstrap = ["/ip4/127.0.0.1/tcp/4001/p2p/`+id+`"]
[[validator]]
id = "`+id+`"
stake = 10.0
`), 0o644)
	miner := filepath.Join(dir, "miner")
	code, out, errs := runPog("init", "--home", miner, "--network", netFile)
	if code != 0 || !strings.Contains(out, "network  test: 1 validators, 1 bootstrap peers") || !strings.Contains(out, "profile local") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	cfg, err := config.LoadConfig(miner)
	if err != nil {
		t.Fatal(err)
	}
	stakes, err := config.LoadGenesis(miner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Network.Validators, []string{id}) || cfg.Network.TrustAnyValidator || cfg.Network.EpochLength.Seconds() != 30 ||
		len(cfg.Node.Bootstrap) != 1 || stakes[id] != 10 || cfg.Validator.Size != config.LocalConfig().Validator.Size {
		t.Fatalf("config %+v, stakes %v", cfg.Network, stakes)
	}

	for body, want := range map[string]string{
		`name = "x"` + "\n":                                            "no validators",
		`name = "x"` + "\nvalidatorz = 1\n":                            "unknown setting",
		"[[validator]]\nid = \"" + id + "\"\nstake = 1.0\n":            "no name",
		`name = "x"` + "\n[[validator]]\nid = \"nope\"\nstake = 1.0\n": "validator 0",
		`name = "x"` + "\nbootstrap = [\"/ip4/1.2.3.4/tcp/1\"]\n[[validator]]\nid = \"" + id + "\"\nstake = 1.0\n": "node.bootstrap",
		`name = "x"` + "\n[[validator]]\nid = \"" + id + "\"\nstake = -1.0\n":                                      "must be positive",
	} {
		os.WriteFile(netFile, []byte(body), 0o644)
		home := filepath.Join(t.TempDir(), "m")
		code, _, errs := runPog("init", "--home", home, "--network", netFile)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("network file %q: exit %d, %q; want an error about %s", body, code, errs, want)
		}
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("network file %q: the home was created", body)
		}
	}
	if code, _, errs := runPog("init", "--home", filepath.Join(dir, "x"), "--network", "no-such-network"); code != 2 || !strings.Contains(errs, "no-such-network.toml") {
		t.Errorf("unknown network: exit %d, %s", code, errs)
	}
}

// The shipped example network file is valid.
func TestExampleNetwork(t *testing.T) {
	n, err := config.ReadNetwork("../../networks/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	c := config.DefaultConfig()
	if err := n.Apply(&c); err != nil || len(c.Network.Validators) != 2 {
		t.Fatalf("%v: %+v", err, c.Network)
	}
}

// TestMain points the default home at a scratch directory, so no test can
// write to the real ~/.pog.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pog-home")
	if err != nil {
		panic(err)
	}
	os.Setenv(config.EnvHome, filepath.Join(dir, "default-home"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// make build links the commit in where the Go VCS stamp is missing.
func TestVersionLinkedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "pog")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.ldCommit=0123abcd-modified", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "pog devel+0123abcd-modified\n") || !strings.Contains(string(out), "\ncommit    0123abcd (modified)\n") {
		t.Fatalf("%v: %s", err, out)
	}
}

// Precedence: a pog run flag replaces what the environment set.
func TestFlagOverridesEnv(t *testing.T) {
	home := filepath.Join(t.TempDir(), "n")
	runPog("init", "--home", home, "--profile", "local")
	t.Setenv("POG_NODE_LISTEN", "/ip4/127.0.0.1/tcp/1")
	code, _, errs := runPog("run", "--home", home, "--role", "miner", "--listen", "flag-value")
	if code != 2 || !strings.Contains(errs, `flag --listen: node.listen "flag-value"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Setenv("POG_NODE_LISTEN", "env-value")
	if code, _, errs := runPog("run", "--home", home, "--role", "miner"); code != 2 || !strings.Contains(errs, `environment POG_NODE_LISTEN: node.listen "env-value"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
