package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/pog-network/pog/node/config"
)

func init() {
	commands["env"] = command{"list the POG_* environment variables that override config.toml, with those set now", runEnv}
}

func runEnv(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog env", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tKEY\tTYPE\tSET TO")
	home, _ := os.LookupEnv(config.EnvHome)
	fmt.Fprintf(tw, "%s\t(--home default)\tpath\t%s\n", config.EnvHome, home)
	for _, v := range config.EnvVars() {
		val, _ := os.LookupEnv(v.Name)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.Key, v.Type, val)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nPrecedence: flag > environment > config.toml > default. Lists are comma-separated.")
	return 0
}
