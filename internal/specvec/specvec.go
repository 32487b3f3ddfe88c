// Package specvec reads the test vectors published in protocol/SPEC.md, so
// that tests regenerate each vector and compare it with the text readers see:
// a change to the code or to the SPEC that makes them disagree fails a test.
//
// A vector block is a fenced code block whose info string is
// "pog-vectors NAME"; its lines are returned without the fences.
package specvec

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Path is protocol/SPEC.md of this module.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "protocol", "SPEC.md")
}

// Block returns the lines of the vector block name in the SPEC at path.
func Block(path, name string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	in, found := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case !in && strings.TrimSpace(l) == "```pog-vectors "+name:
			if found {
				return nil, fmt.Errorf("%s: two vector blocks named %q", path, name)
			}
			in, found = true, true
		case in && strings.TrimSpace(l) == "```":
			in = false
		case in:
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found || in {
		return nil, fmt.Errorf("%s: no complete vector block %q", path, name)
	}
	return lines, nil
}
