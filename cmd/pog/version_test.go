package main

import (
	"runtime/debug"
	"testing"
)

// A build without a module version is named by its commit, from the VCS
// stamp or the one make build links in, wherever a version is shown.
func TestVersionOf(t *testing.T) {
	const rev = "3e2575b0c1d2e3f4a5b6c7d8e9f00112233445566"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name          string
		bi            *debug.BuildInfo
		linked        string
		version       string
		label, commit string
	}{
		{"vcs stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, "",
			"devel+3e2575b0c1d2", "devel+3e2575b0c1d2", rev},
		{"dirty vcs stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, "",
			"devel+3e2575b0c1d2-modified", "devel+3e2575b0c1d2-modified", rev},
		{"make build, -buildvcs=false", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0123abcd-modified",
			"devel+0123abcd-modified", "devel+0123abcd-modified", "0123abcd"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202092208-3e2575b0c1d2+dirty"}, Settings: vcs("true")}, "",
			"v0.0.0-20261202092208-3e2575b0c1d2+dirty", "v0.0.0-20261202092208-3e2575b0c1d2+dirty", rev},
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs("false")}, "",
			"v1.2.0", "v1.2.0 3e2575b0c1d2", rev},
		{"nothing known", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "(devel)", "(devel)", unknown},
		{"no build info", nil, "", unknown, unknown, unknown},
	} {
		v := versionOf(c.bi, c.linked)
		if v.Version != c.version || v.label() != c.label || v.Commit != c.commit {
			t.Errorf("%s: version %q, label %q, commit %q; want %q, %q, %q", c.name, v.Version, v.label(), v.Commit, c.version, c.label, c.commit)
		}
	}
}
