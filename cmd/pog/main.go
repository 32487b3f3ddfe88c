// Command pog is the Proof-of-GPU node and its tools. Each subcommand is a
// function of its arguments and output streams returning an exit code, so
// tests drive it in process: 0 success, 1 a failed check or an operational
// error, 2 a usage or configuration error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/pog-network/pog/node/config"
)

// command is one subcommand; a summary starting "(internal)" hides it from
// the help.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"bench": {"run one local proof round: generate, multiply, commit, sample, verify", runBench},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 { // pog help CMD
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pog: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if helpRequested(args[1:]) {
		stderr = stdout // the flag package prints help to the error stream
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	var names []string
	for n, c := range commands {
		if !strings.HasPrefix(c.summary, "(internal)") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: pog <command> [flags]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'pog <command> -h' for a command's flags. Settings: config.toml in the home\n($POG_HOME, default ~/.pog), overridden by POG_* variables ('pog env'), then flags.")
}

// usageError prints a flag error the way the flag package does and returns 2.
func usageError(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "pog %s: %s\n", name, strings.TrimSpace(err.Error()))
	return 2
}

// fail prints err as pog NAME's error and returns its exit code.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "pog %s: %v\n", name, err)
	return exitCode(err)
}

// exitCode is 2 for an error in the settings (a *node.ConfigError), which a
// restart cannot cure (the systemd unit does not restart on 2), else 1.
func exitCode(err error) int {
	if _, ok := errors.AsType[*config.Error](err); ok {
		return 2
	}
	return 1
}
