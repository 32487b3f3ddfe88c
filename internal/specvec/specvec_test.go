package specvec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "SPEC.md")
	text := "intro\n```pog-vectors a\nx 1\n\ny 2\n```\n```pog-vectors b\nz\n```\n```pog-vectors open\nw\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Block(path, "a"); err != nil || !slices.Equal(got, []string{"x 1", "", "y 2"}) {
		t.Fatalf("a: %q %v", got, err)
	}
	if got, err := Block(path, "b"); err != nil || !slices.Equal(got, []string{"z"}) {
		t.Fatalf("b: %q %v", got, err)
	}
	for _, name := range []string{"open", "missing"} {
		if _, err := Block(path, name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := os.Stat(Path()); err != nil {
		t.Fatalf("the module's SPEC: %v", err)
	}
}
