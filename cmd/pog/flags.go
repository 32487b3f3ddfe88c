package main

import (
	"flag"
	"fmt"
	"strings"
)

// printFlags is every command's flag help: the flag package's layout with
// -- names, and the default printed only where the help text does not
// already say what happens without the flag ("(default: all)", "(0: one
// per CPU)", "(required)"), and never a "not given" sentinel such as -1.
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "usage: %s [flags]\n\nflags:\n", fs.Name())
	fs.VisitAll(func(f *flag.Flag) {
		typ, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(help, "\n", "\n    \t"))
		if def := f.DefValue; !isZeroDefault(def) && !statesDefault(help) {
			if typ == "string" {
				def = fmt.Sprintf("%q", def)
			}
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// isZeroDefault: zero values, and -1, which this CLI's integer flags use
// for "not given".
func isZeroDefault(def string) bool {
	return def == "" || def == "false" || def == "0" || def == "0s" || def == "-1"
}

func statesDefault(help string) bool {
	return strings.Contains(help, "(default") || strings.Contains(help, "(required") || strings.Contains(help, "(0:")
}

// helpRequested reports whether args ask a command for its help, which then
// goes to stdout. Scanning stops at "--"; a flag value spelled -h (--seed
// -h) also counts, which only moves that run's errors to stdout.
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}
