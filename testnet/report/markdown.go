package report

import (
	"fmt"
	"strings"
)

// mdEscaper escapes text for a Markdown table cell or paragraph: characters
// Markdown would read as markup or HTML, and line breaks.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "<", `\<`, ">", `\>`, "`", "\\`", "*", `\*`, "[", `\[`, "]", `\]`,
	"\r\n", " ", "\n", " ", "\r", " ",
)

func md(s string) string { return mdEscaper.Replace(s) }

// mdCode is s as a code span, or escaped text if it holds a backtick.
func mdCode(s string) string {
	if s == "" {
		return dash
	}
	if strings.ContainsAny(s, "`\r\n") {
		return md(s)
	}
	return "`" + s + "`"
}

// sections are the report's headings in order, for the table of contents.
var sections = []struct{ ID, Title string }{
	{"checks", "Checks"}, {"plots", "Plots"}, {"profitability", "Profitability"}, {"nodes", "Nodes"},
	{"epochs", "Epochs"}, {"detections", "Detections"}, {"false-positives", "False positives"},
	{"gossip-latency", "Gossip latency"}, {"run", "Run"},
}

// markdown renders report.md.
func markdown(v *view) []byte {
	var b strings.Builder
	b.WriteString("# pog testnet report\n\n")
	fmt.Fprintf(&b, "**%s** — %s\n\n", v.Verdict, v.ChecksSummary)
	for _, s := range sections {
		fmt.Fprintf(&b, "- [%s](#%s)\n", s.Title, s.ID)
	}
	b.WriteString("\n## Checks\n\n")
	mdTable(&b, v.Checks, "No checks recorded.")

	b.WriteString("## Plots\n\n")
	for _, p := range v.Plots {
		fmt.Fprintf(&b, "![%s](%s)\n\n", md(p.Alt), p.File)
	}

	b.WriteString("## Profitability\n\n" + md(v.ProfitNote) + "\n\n")
	mdTable(&b, v.Profit, "No adversary miners.")

	b.WriteString("## Nodes\n\n")
	if v.ScaleNote != "" {
		b.WriteString(md(v.ScaleNote) + "\n\n")
	}
	mdTable(&b, v.Nodes, "No nodes recorded.")

	b.WriteString("## Epochs\n\n")
	mdTable(&b, v.EpochList, "No epoch closed.")
	for _, e := range v.Epochs {
		fmt.Fprintf(&b, "### Epoch %d of the run (%d)\n\n", e.OfRun, e.Epoch)
		same := "✓ yes"
		if !e.Identical {
			same = "✗ **no**"
		}
		fmt.Fprintf(&b, "%s — consensus hash %s — identical on all nodes: %s\n\n", md(e.Window), mdCode(e.Hash), same)
		if len(e.Differs) > 0 {
			b.WriteString("Nodes computing another hash:\n\n")
			for _, d := range e.Differs {
				b.WriteString("- " + md(d) + "\n")
			}
			b.WriteString("\n")
		}
		mdTable(&b, e.Miners, "No miner results.")
		mdTable(&b, e.Trust, "No validator trust.")
	}

	b.WriteString("## Detections\n\nDetections per adversary class and epoch, by kind.\n\n")
	mdTable(&b, v.Adversaries, "No adversaries in this run.")
	if len(v.Detections.Rows) > 0 {
		fmt.Fprintf(&b, "<details>\n<summary>All %d detections</summary>\n\n", len(v.Detections.Rows))
		mdTable(&b, v.Detections, "")
		b.WriteString("</details>\n\n")
	}
	b.WriteString("## False positives\n\n")
	mdTable(&b, v.FalsePos, "none")
	b.WriteString("## Gossip latency\n\n" + gossipNote + "\n\n")
	mdTable(&b, v.Gossip, "No latency samples.")
	b.WriteString("## Run\n\n")
	mdTable(&b, v.Run, "")
	b.WriteString("### Settings against production\n\n")
	mdTable(&b, v.Settings, "Not recorded.")
	return []byte(b.String())
}

// mdTable writes t as a GitHub table, or empty as a line when t has no
// rows.
func mdTable(b *strings.Builder, t table, empty string) {
	if len(t.Rows) == 0 {
		b.WriteString(empty + "\n\n")
		return
	}
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			if c == "" {
				c = " "
			}
			b.WriteString(" " + md(c) + " |")
		}
		b.WriteString("\n")
	}
	line(t.Head)
	b.WriteString(strings.Repeat("|---", len(t.Head)) + "|\n")
	for _, r := range t.Rows {
		line(r.Cells)
	}
	b.WriteString("\n")
}
