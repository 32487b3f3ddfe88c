package report

import (
	"bytes"
	"html/template"
)

// renderHTML renders report.html: the content of report.md as one
// self-contained page; the plots are referenced by relative path.
func renderHTML(v *view) ([]byte, error) {
	var buf bytes.Buffer
	page := struct {
		*view
		Sections any
	}{v, sections}
	if err := htmlPage.Execute(&buf, page); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pog testnet report — {{.Verdict}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { margin-bottom: .3rem; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2rem; }
.verdict { display: inline-block; font-size: 1.2rem; font-weight: bold; padding: .35rem .8rem; border-radius: 4px; }
.verdict.ok { background: #e6f4ea; color: #1e7b34; }
.verdict.fail { background: #fce8e6; color: #b3261e; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-size: .92rem; }
th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
tr.ok td:first-child { color: #1e7b34; font-weight: bold; }
tr.fail td { background: #fdf1f0; }
tr.fail td:first-child { color: #b3261e; font-weight: bold; }
tr.adv td { background: #fff8e6; }
tr.warn td { background: #fff3cd; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .9em; background: #f5f5f5; padding: 0 .2rem; word-break: break-all; }
.no { color: #b3261e; font-weight: bold; }
figure { margin: 1rem 0; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: .9rem; }
.toc { margin: 1rem 0; padding: .5rem .8rem; background: #f7f7f7; border-radius: 4px; }
.toc a { margin-left: .8rem; }
.note { color: #444; font-size: .92rem; max-width: 60rem; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
.plots figure { flex: 1 1 560px; margin: 0; }
details { margin: .4rem 0 .8rem; }
summary { cursor: pointer; font-weight: 600; }
</style>
</head>
<body>
<h1>pog testnet report</h1>
<p><span class="verdict {{if .Passed}}ok{{else}}fail{{end}}">{{.Verdict}}</span> {{.ChecksSummary}}</p>
<nav class="toc"><strong>Contents</strong>{{range .Sections}} <a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav>

<h2 id="checks">Checks</h2>
{{if .Checks.Rows}}{{template "table" .Checks}}{{else}}<p>No checks recorded.</p>{{end}}

<h2 id="plots">Plots</h2>
<div class="plots">{{range .Plots}}<figure><a href="{{.File}}"><img src="{{.File}}" alt="{{.Alt}}" width="{{.Width}}" height="{{.Height}}"></a><figcaption>{{.Alt}}</figcaption></figure>
{{end}}</div>

<h2 id="profitability">Profitability</h2>
<p class="note">{{.ProfitNote}}</p>
{{if .Profit.Rows}}{{template "table" .Profit}}{{else}}<p>No adversary miners.</p>{{end}}

<h2 id="nodes">Nodes</h2>
{{with .ScaleNote}}<p class="note">{{.}}</p>{{end}}
{{if .Nodes.Rows}}{{template "table" .Nodes}}{{else}}<p>No nodes recorded.</p>{{end}}

<h2 id="epochs">Epochs</h2>
{{if .EpochList.Rows}}{{template "table" .EpochList}}{{else}}<p>No epoch closed.</p>{{end}}
{{range .Epochs}}<details><summary>Epoch {{.OfRun}} of the run ({{.Epoch}}) — {{.Window}}{{if not .Identical}} — <span class="no">consensus differs</span>{{end}}</summary>
<p>Consensus hash {{if .Hash}}<code>{{.Hash}}</code>{{else}}—{{end}} — identical on all nodes: {{if .Identical}}✓ yes{{else}}<span class="no">✗ no</span>{{end}}</p>
{{if .Differs}}<p>Nodes computing another hash:</p><ul>{{range .Differs}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Miners.Rows}}{{template "table" .Miners}}{{else}}<p>No miner results.</p>{{end}}
{{if .Trust.Rows}}{{template "table" .Trust}}{{else}}<p>No validator trust.</p>{{end}}
</details>
{{end}}
<h2 id="detections">Detections</h2>
<p>Detections per adversary class and epoch, by kind.</p>
{{if .Adversaries.Rows}}{{template "table" .Adversaries}}{{else}}<p>No adversaries in this run.</p>{{end}}
{{if .Detections.Rows}}<details><summary>All {{len .Detections.Rows}} detections</summary>
{{template "table" .Detections}}</details>{{end}}

<h2 id="false-positives">False positives</h2>
{{if .FalsePos.Rows}}{{template "table" .FalsePos}}{{else}}<p>none</p>{{end}}
<h2 id="gossip-latency">Gossip latency</h2>
<p>{{.GossipNote}}</p>
{{if .Gossip.Rows}}{{template "table" .Gossip}}{{else}}<p>No latency samples.</p>{{end}}
<h2 id="run">Run</h2>
{{template "table" .Run}}
<h3>Settings against production</h3>
{{template "table" .Settings}}
</body>
</html>
{{define "table"}}<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{with .Class}} class="{{.}}"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}`))
