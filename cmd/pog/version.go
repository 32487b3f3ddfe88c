package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/pog-network/pog/kernels"
)

func init() {
	commands["version"] = command{"print the module version, VCS commit, Go version and compiled-in backends", runVersion}
}

// ldCommit is the commit where the build info has none (a git worktree, a
// Docker build without .git, GOFLAGS=-buildvcs=false): make build sets it
// with -ldflags -X main.ldCommit=…, suffixed -modified for a dirty tree.
var ldCommit string

// buildVersion is what `pog version` prints, read from the build info the
// Go toolchain embeds (go build in a git checkout records the commit).
type buildVersion struct {
	Module   string   `json:"module"`
	Version  string   `json:"version"`
	Commit   string   `json:"commit"`
	Time     string   `json:"commit_time,omitempty"`
	Modified bool     `json:"modified"`
	Go       string   `json:"go"`
	Platform string   `json:"platform"`
	CUDA     bool     `json:"cuda"`
	Backends []string `json:"backends"`
}

const unknown = "(unknown)"

func readVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, ldCommit)
}

// versionOf reads bi (nil: none) and the linked commit.
func versionOf(bi *debug.BuildInfo, linked string) buildVersion {
	v := buildVersion{Version: unknown, Commit: unknown, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Backends: kernels.Names()}
	if linked != "" {
		v.Commit, v.Modified = strings.CutSuffix(linked, "-modified")
	}
	if bi != nil {
		v.Module, v.Version, v.Go = bi.Main.Path, bi.Main.Version, bi.GoVersion
		v.readSettings(bi.Settings)
	}
	if (v.Version == "(devel)" || v.Version == "" || v.Version == unknown) && v.Commit != unknown {
		v.Version = "devel+" + shortCommit(v.Commit)
		if v.Modified {
			v.Version += "-modified"
		}
	}
	return v
}

func (v *buildVersion) readSettings(settings []debug.BuildSetting) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "-tags":
			v.CUDA = slices.Contains(strings.Split(s.Value, ","), "cuda")
		}
	}
}

// shortCommit is a commit's first 12 digits, as Go's pseudo-versions name it.
func shortCommit(c string) string { return c[:min(len(c), 12)] }

// label is the version in one line, for the API's status and the
// dashboard: the version, and the commit where the version does not name it.
func (v buildVersion) label() string {
	if v.Commit == unknown || strings.Contains(v.Version, shortCommit(v.Commit)) {
		return v.Version
	}
	return v.Version + " " + shortCommit(v.Commit)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	v := readVersion()
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		return 0
	}
	commit := v.Commit
	if v.Modified {
		commit += " (modified)"
	}
	if v.Time != "" {
		commit += " " + v.Time
	}
	cuda := "no (cpu build)"
	if v.CUDA {
		cuda = "yes (built with -tags cuda)"
	}
	fmt.Fprintf(stdout, "pog %s\nmodule    %s\ncommit    %s\ngo        %s %s\ncuda      %s\nbackends  %s\n",
		v.Version, v.Module, commit, v.Go, v.Platform, cuda, strings.Join(v.Backends, ", "))
	return 0
}
