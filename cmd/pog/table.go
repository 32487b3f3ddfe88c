package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// printTable is what every listing command prints: rows as an indented
// JSON array with --json, else a table for a reader.
func printTable[R any](w io.Writer, asJSON bool, rows []R, header string, line func(R) string) {
	if asJSON {
		writeJSON(w, rows)
		return
	}
	writeTable(w, rows, header, line)
}

// writeTable writes the tab-separated header, then line(r) for each row,
// aligned in columns.
func writeTable[R any](w io.Writer, rows []R, header string, line func(R) string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, line(r))
	}
	tw.Flush()
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return 1
	}
	return 0
}
