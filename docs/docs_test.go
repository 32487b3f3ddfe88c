// Package docs_test checks the documentation against the code it
// describes: architecture.md's package map and layering rules against
// `go list`, the monitoring page's API paths and metrics against the
// OpenAPI description and node/metrics, the pog commands and flags the
// docs give against pog's own help, every relative link of the README and
// docs/ against the files, and the README's commands against the Makefile.
package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the module root, relative to this package's directory.
const root = ".."

// pkg is one package of the module as `go list` reports it, with import
// paths relative to the module (node/api).
type pkg struct {
	imports []string // of module packages, its tests' included
}

// modulePackages lists the module's packages, relative to the module, with
// and without the cuda build tag, and the module packages each imports. It
// skips the test when no go tool is installed.
func modulePackages(t *testing.T) map[string]pkg {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list packages with: %v", err)
	}
	mod := modulePath(t)
	pkgs := map[string]pkg{}
	for _, tags := range []string{"", "cuda"} {
		cmd := exec.Command(gotool, "list", "-e", "-tags="+tags, "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
		cmd.Dir = root
		// The same packages on every machine: linux/amd64, the platform
		// every backend builds on, with cgo (listing compiles nothing).
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags=%q ./...: %v\n%s", tags, err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath                         string
				Imports, TestImports, XTestImports []string
				Error                              *struct{ Err string }
			}
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if p.Error != nil {
				t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
			}
			rel, _ := relative(mod, p.ImportPath)
			q := pkgs[rel]
			for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
				if r, ok := relative(mod, imp); ok && r != rel {
					q.imports = append(q.imports, r)
				}
			}
			pkgs[rel] = q
		}
	}
	for rel, q := range pkgs {
		slices.Sort(q.imports)
		pkgs[rel] = pkg{slices.Compact(q.imports)}
	}
	return pkgs
}

// modulePath is the module line of go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no module line")
	}
	return string(m[1])
}

// relative is path within module mod (node/api), and whether it is in it.
func relative(mod, path string) (string, bool) {
	if path == mod {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, mod+"/")
	return rel, ok
}

// table is the markdown table that follows heading in doc, as rows of
// trimmed cells, header and separator rows dropped.
func table(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	var rows [][]string
	sc := bufio.NewScanner(strings.NewReader(after))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("no table with rows under %q", heading)
	}
	return rows[2:]
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// spans are the code spans of a table cell: `node/...`, `proof`.
func spans(cell string) []string {
	var s []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		s = append(s, m[1])
	}
	return s
}

// prose is doc without its fenced code blocks, whose backticks would pair
// with those of code spans.
func prose(doc string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every package go list reports has one row in architecture.md's package
// map, and every row names a package that exists.
func TestPackageMap(t *testing.T) {
	pkgs := modulePackages(t)
	mapped := map[string]bool{}
	for _, row := range table(t, readDoc(t, "docs/architecture.md"), "## Package map") {
		s := spans(row[0])
		if len(s) != 1 {
			t.Fatalf("package map row %q: want one package in its first cell", row)
		}
		if mapped[s[0]] {
			t.Errorf("docs/architecture.md maps %s twice", s[0])
		}
		mapped[s[0]] = true
		if _, ok := pkgs[s[0]]; !ok {
			t.Errorf("docs/architecture.md maps %s, which go list does not report: remove its row", s[0])
		}
	}
	for _, p := range sortedKeys(pkgs) {
		if !mapped[p] {
			t.Errorf("package %s is missing from docs/architecture.md's package map: add a row saying what it owns", p)
		}
	}
}

// rule is one row of the layering rules: packages matching layer may
// import module packages matching allow.
type rule struct {
	layer string
	allow []string
}

// matches reports whether pattern (node/... or an exact path) matches p.
func matches(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// governing is the rule with the longest layer pattern matching p.
func governing(rules []rule, p string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if matches(r.layer, p) && (!found || len(r.layer) > len(best.layer)) {
			best, found = r, true
		}
	}
	return best, found
}

// Every import of a module package, tests' included, is allowed by the
// layering rule that governs the importer.
func TestLayering(t *testing.T) {
	pkgs := modulePackages(t)
	var rules []rule
	for _, row := range table(t, readDoc(t, "docs/architecture.md"), "## Layering rules") {
		layer := spans(row[0])
		if len(layer) != 1 || len(row) < 2 {
			t.Fatalf("layering rule row %q: want one layer pattern and its allowed imports", row)
		}
		rules = append(rules, rule{layer[0], spans(row[1])})
	}
	for _, p := range sortedKeys(pkgs) {
		r, ok := governing(rules, p)
		if !ok {
			t.Errorf("package %s is under no layering rule in docs/architecture.md", p)
			continue
		}
		for _, imp := range pkgs[p].imports {
			if !allowed(r, imp) {
				t.Errorf("%s imports %s, which the rule for %s does not allow (may import: %s)", p, imp, r.layer, strings.Join(r.allow, ", "))
			}
		}
	}
}

func allowed(r rule, imp string) bool {
	for _, a := range r.allow {
		if matches(a, imp) {
			return true
		}
	}
	return false
}

// The rules resolve as documented: the longest pattern wins, and a
// pattern with /... covers the package itself and those under it.
func TestGoverningRule(t *testing.T) {
	rules := []rule{{"protocol/...", nil}, {"protocol/scoring", nil}, {"node/...", nil}}
	for p, want := range map[string]string{
		"protocol": "protocol/...", "protocol/round": "protocol/...", "protocol/scoring": "protocol/scoring",
		"node": "node/...", "node/config/env": "node/...",
	} {
		if r, ok := governing(rules, p); !ok || r.layer != want {
			t.Errorf("%s governed by %q (found %v), want %s", p, r.layer, ok, want)
		}
	}
	if _, ok := governing(rules, "nodes"); ok {
		t.Error("node/... governs nodes")
	}
}

func sortedKeys(m map[string]pkg) []string {
	return slices.Sorted(maps.Keys(m))
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link in README.md and docs/ names a file or directory
// that exists, and a link to a heading of a markdown file names one it has.
func TestRelativeLinks(t *testing.T) {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", f, m[1], err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchors(t, path), anchor) {
				t.Errorf("%s links to %s: %s has no heading with that anchor", f, m[1], path)
			}
		}
	}
}

// anchors are the anchors GitHub gives the headings of a markdown file:
// lower case, spaces as hyphens, other punctuation dropped.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a []string
	for _, line := range strings.Split(prose(string(b)), "\n") {
		title, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		title = strings.TrimSpace(strings.TrimLeft(title, "#"))
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, title)
		a = append(a, slug)
	}
	return a
}

// The README's quick start runs make targets the Makefile defines.
func TestReadmeCommands(t *testing.T) {
	readme := readDoc(t, "README.md")
	_, block, ok := strings.Cut(readme, "```sh\n")
	if !ok {
		t.Fatal("README.md has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	makefile := readDoc(t, "Makefile")
	n := 0
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "make" {
			continue
		}
		n++
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f[1]) + `:`).MatchString(makefile) {
			t.Errorf("README.md runs make %s, which the Makefile does not define", f[1])
		}
	}
	if n == 0 {
		t.Error("README.md's first sh block runs no make target")
	}
}

// monitoring is the operator page that lists the API and the metrics.
const monitoring = "docs/operator/monitoring.md"

// Every path the API's OpenAPI description declares is in monitoring.md,
// and every /api path there is declared (or is the description itself).
func TestMonitoringListsAPIPaths(t *testing.T) {
	spec := readDoc(t, "node/api/openapi.yaml")
	declared := map[string]bool{"/api/v1/openapi.yaml": true} // served beside the paths it declares
	for _, m := range regexp.MustCompile(`(?m)^  (/\S+):\s*$`).FindAllStringSubmatch(spec, -1) {
		declared[m[1]] = true
	}
	documented := map[string]bool{}
	for _, s := range spans(prose(readDoc(t, monitoring))) {
		if p, _, _ := strings.Cut(s, "?"); strings.HasPrefix(p, "/api/") {
			documented[p] = true
			if !declared[p] {
				t.Errorf("%s lists %s, which node/api/openapi.yaml does not declare", monitoring, p)
			}
		}
	}
	for p := range declared {
		if !documented[p] {
			t.Errorf("node/api/openapi.yaml declares %s, which %s does not list", p, monitoring)
		}
	}
}

// Every metric node/metrics names is in monitoring.md, and every pog_
// metric there is one it names.
func TestMonitoringListsMetrics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "node", "metrics", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	literal := regexp.MustCompile(`"(pog_[a-z_]+)"`)
	metricName := regexp.MustCompile(`^pog_[a-z_]+$`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			named[m[1]] = true
		}
	}
	if len(named) == 0 {
		t.Fatal("node/metrics names no pog_ metric")
	}
	documented := map[string]bool{}
	for _, s := range spans(prose(readDoc(t, monitoring))) {
		name, _, _ := strings.Cut(s, "{")
		if metricName.MatchString(name) {
			documented[name] = true
			if !named[name] {
				t.Errorf("%s lists %s, which node/metrics does not export", monitoring, name)
			}
		}
	}
	for n := range named {
		if !documented[n] {
			t.Errorf("node/metrics exports %s, which %s does not list", n, monitoring)
		}
	}
}

// pogCLI is a built pog binary and what its help says.
type pogCLI struct {
	t     *testing.T
	bin   string
	flags map[string]map[string]bool // by command ("bench --host" for the host bench)
}

// buildPog builds cmd/pog, skipping the test in -short mode or without a go
// tool.
func buildPog(t *testing.T) *pogCLI {
	t.Helper()
	if testing.Short() {
		t.Skip("builds pog")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build pog with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "pog")
	cmd := exec.Command(gotool, "build", "-o", bin, "./cmd/pog")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/pog: %v\n%s", err, out)
	}
	return &pogCLI{t: t, bin: bin, flags: map[string]map[string]bool{}}
}

func (p *pogCLI) help(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.bin, append(args, "-h")...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("pog %s -h: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// commands are the commands `pog --help` lists.
func (p *pogCLI) commands() map[string]bool {
	_, list, ok := strings.Cut(p.help(), "commands:\n")
	if !ok {
		p.t.Fatal("pog --help lists no commands")
	}
	cmds := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)\s`).FindAllStringSubmatch(list, -1) {
		cmds[m[1]] = true
	}
	return cmds
}

// flagsOf are the flags `pog KEY -h` lists, KEY a command or "bench --host".
func (p *pogCLI) flagsOf(key string) map[string]bool {
	if f, ok := p.flags[key]; ok {
		return f
	}
	f := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`).FindAllStringSubmatch(p.help(strings.Fields(key)...), -1) {
		f[m[1]] = true
	}
	p.flags[key] = f
	return f
}

var (
	pogInvocation = regexp.MustCompile(`\bpog(?:-cuda)? ([a-z][a-z-]*)([^` + "`" + `#\n]*)`)
	flagName      = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
)

// Every pog command is documented, and every flag the docs give a command
// (in a command line, a code span, or a usage block's continuation lines)
// is one that command has.
func TestDocumentedFlags(t *testing.T) {
	cli := buildPog(t)
	cmds := cli.commands()
	files, err := filepath.Glob(filepath.Join(root, "docs", "operator", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "docs", "testnet.md"))
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		last := ""
		for n, line := range strings.Split(string(b), "\n") {
			check := func(key, args string) {
				for _, m := range flagName.FindAllStringSubmatch(args, -1) {
					if !cli.flagsOf(key)[m[1]] && m[1] != "help" {
						t.Errorf("%s:%d: pog %s has no flag --%s", f, n+1, key, m[1])
					}
				}
			}
			if strings.HasPrefix(strings.TrimSpace(line), "[--") && last != "" {
				check(last, line)
				continue
			}
			last = ""
			for _, m := range pogInvocation.FindAllStringSubmatch(line, -1) {
				if !cmds[m[1]] {
					continue
				}
				seen[m[1]] = true
				key := m[1]
				if key == "bench" && flagName.MatchString(m[2]) && strings.Contains(m[2], "--host") {
					key = "bench --host"
				}
				check(key, m[2])
				last = key
			}
		}
	}
	for c := range cmds {
		if !seen[c] {
			t.Errorf("pog %s is in no operator doc, the README or docs/testnet.md", c)
		}
	}
}
