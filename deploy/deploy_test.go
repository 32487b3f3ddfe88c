// Package deploy holds the packaging files (systemd unit, Dockerfiles,
// compose); its tests check them against the repository without Docker.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/node/config"
	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]struct {
		Image       string `yaml:"image"`
		Build       *struct{ Context, Dockerfile string }
		Command     []string          `yaml:"command"`
		Entrypoint  []string          `yaml:"entrypoint"`
		NetworkMode string            `yaml:"network_mode"`
		Volumes     []string          `yaml:"volumes"`
		Environment map[string]string `yaml:"environment"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func TestCompose(t *testing.T) {
	var c composeFile
	readYAML(t, "compose.yaml", &c)
	for _, s := range []string{"validator", "miner-1", "miner-2", "prometheus", "grafana"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("compose.yaml: no service %s", s)
		}
	}
	apis := map[string]bool{}
	for name, s := range c.Services {
		if s.Build != nil {
			if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil {
				t.Errorf("%s: build: %v", name, err)
			}
		}
		if name != "validator" && s.NetworkMode != "service:validator" {
			t.Errorf("%s: network_mode %q, want the validator's namespace (the APIs are loopback-only)", name, s.NetworkMode)
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, "./") {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("%s: volume %s: %v", name, v, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("%s: volume %s is not declared", name, src)
			}
		}
		if slices.Contains(s.Entrypoint, "/entrypoint.sh") {
			if len(s.Command) != 3 {
				t.Fatalf("%s: command %v, want ROLE P2P_PORT API_PORT", name, s.Command)
			}
			apis["127.0.0.1:"+s.Command[2]] = true
		}
	}
	// Prometheus scrapes exactly the nodes' API listeners.
	var p struct {
		ScrapeConfigs []struct {
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "prometheus.yml", &p)
	got := map[string]bool{}
	for _, sc := range p.ScrapeConfigs {
		if sc.MetricsPath != "/metrics" {
			t.Errorf("prometheus.yml: metrics_path %q", sc.MetricsPath)
		}
		for _, s := range sc.StaticConfigs {
			for _, tg := range s.Targets {
				got[tg] = true
			}
		}
	}
	if len(apis) != 3 || !mapsEqual(got, apis) {
		t.Errorf("prometheus targets %v, node APIs %v", got, apis)
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Every COPY source of the Dockerfiles exists in the build context (the
// repository root), and base images are pinned.
func TestDockerfiles(t *testing.T) {
	for _, df := range []string{"Dockerfile", "Dockerfile.cuda"} {
		data, err := os.ReadFile(df)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 3 && f[0] == "COPY" && !strings.HasPrefix(f[1], "--from"):
				for _, src := range f[1 : len(f)-1] {
					if _, err := os.Stat(filepath.Join("..", src)); err != nil && src != "." {
						t.Errorf("%s: COPY %s: %v", df, src, err)
					}
				}
			case len(f) >= 2 && f[0] == "FROM" && (strings.HasSuffix(f[1], ":latest") || !strings.Contains(f[1], ":")):
				t.Errorf("%s: unpinned base image %s", df, f[1])
			}
		}
		if !strings.Contains(string(data), "./cmd/pog") {
			t.Errorf("%s does not build ./cmd/pog", df)
		}
	}
	if _, err := os.Stat("../cmd/pog/main.go"); err != nil {
		t.Fatal(err)
	}
}

// The POG_* variables the deploy files set are config keys (or POG_HOME):
// a renamed key cannot leave them behind.
func TestDeployEnvNames(t *testing.T) {
	known := map[string]bool{config.EnvHome: true}
	for _, v := range config.EnvVars() {
		known[v.Name] = true
	}
	re := regexp.MustCompile(`POG_[A-Z0-9_]+`)
	for _, f := range []string{"compose.yaml", "compose/entrypoint.sh", "systemd/pog.service", "Dockerfile", "Dockerfile.cuda"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range re.FindAllString(string(data), -1) {
			if !known[name] {
				t.Errorf("%s sets %s, which is no config key", f, name)
			}
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile("systemd/pog.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=pog", "Restart=on-failure", "NoNewPrivileges=yes",
		"ProtectSystem=strict", "ProtectHome=yes", "ExecStart=/usr/local/bin/pog run --role"} {
		if !strings.Contains(string(data), "\n"+want) {
			t.Errorf("pog.service lacks %s", want)
		}
	}
}

func TestEntrypointSyntax(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if out, err := exec.Command(sh, "-n", "compose/entrypoint.sh").CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v: %s", err, out)
	}
}

// Grafana gets the dashboard with its datasource input replaced by the
// provisioned datasource's uid.
func TestGrafanaDatasource(t *testing.T) {
	var ds struct{ Datasources []struct{ UID string } }
	readYAML(t, "compose/grafana-datasource.yml", &ds)
	dash, err := os.ReadFile("grafana/pog.json")
	if err != nil {
		t.Fatal(err)
	}
	compose, _ := os.ReadFile("compose.yaml")
	if len(ds.Datasources) != 1 || !strings.Contains(string(compose), "s/$${DS_PROMETHEUS}/"+ds.Datasources[0].UID+"/g") ||
		!strings.Contains(string(dash), "${DS_PROMETHEUS}") {
		t.Fatalf("datasource %+v; the dashboard's input and compose's substitution disagree", ds)
	}
}
