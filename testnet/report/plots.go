package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot geometry: 10×6 in at 100 dpi is 1000×600 pixels, room for a
// legend of 30 and more full names beside the data.
const (
	plotDPI    = 100
	plotWidth  = 10 * vg.Inch
	plotHeight = 6 * vg.Inch
	// maxLegendWidth is the most of the width a legend may take.
	maxLegendWidth = 0.4 * plotWidth
)

// PNGWidth and PNGHeight are the plots' size in pixels.
const (
	PNGWidth  = 1000
	PNGHeight = 600
)

// plotFiles are the plots in the order the report shows them.
var plotFiles = []struct {
	file, alt string
	draw      func(*Summary) *figure
}{
	{"weights.png", "Consensus weight per miner over epochs", weightsPlot},
	{"tflops.png", "Measured TFLOPS against the simulated profile", tflopsPlot},
	{"detections.png", "Detection timeline by adversary class", detectionsPlot},
	{"gossip.png", "Challenge gossip latency", gossipPlot},
}

var (
	red       = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	blue      = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange    = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	gray      = color.Gray{Y: 110}
	lightGray = color.Gray{Y: 225}
	// palette is Tableau 20 without its reds (red marks false positives)
	// and its light gray, dark and light shades apart.
	palette = []color.Color{
		color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
		color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 148, G: 103, B: 189, A: 255},
		color.RGBA{R: 140, G: 86, B: 75, A: 255}, color.RGBA{R: 227, G: 119, B: 194, A: 255},
		color.RGBA{R: 127, G: 127, B: 127, A: 255}, color.RGBA{R: 188, G: 189, B: 34, A: 255},
		color.RGBA{R: 23, G: 190, B: 207, A: 255}, color.RGBA{R: 174, G: 199, B: 232, A: 255},
		color.RGBA{R: 255, G: 187, B: 120, A: 255}, color.RGBA{R: 152, G: 223, B: 138, A: 255},
		color.RGBA{R: 197, G: 176, B: 213, A: 255}, color.RGBA{R: 196, G: 156, B: 148, A: 255},
		color.RGBA{R: 247, G: 182, B: 210, A: 255}, color.RGBA{R: 219, G: 219, B: 141, A: 255},
		color.RGBA{R: 158, G: 218, B: 229, A: 255},
	}
	// shapes are glyphs, filled ones first; CrossGlyph marks false
	// positives. With palette's 17 colours a series' pair of colour and
	// shape is its own up to 17 × 7 = 119 series.
	shapes = []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
		draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{},
	}
)

func colorAt(i int) color.Color      { return palette[i%len(palette)] }
func shapeAt(i int) draw.GlyphDrawer { return shapes[i%len(shapes)] }

// legendEntry is a legend line; one without thumbnails heads a group.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// figure is a plot with its legend drawn outside, to the right of the data.
type figure struct {
	p       *plot.Plot
	entries []legendEntry
	group   string // of the last series added
}

// sans sets a text style to Liberation Sans of the given size.
func sans(sty *text.Style, size vg.Length) {
	sty.Font = font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

func newFigure(title, xLabel, yLabel string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	sans(&p.Title.TextStyle, vg.Points(16))
	sans(&p.X.Label.TextStyle, vg.Points(13))
	sans(&p.Y.Label.TextStyle, vg.Points(13))
	sans(&p.X.Tick.Label, vg.Points(11))
	sans(&p.Y.Tick.Label, vg.Points(11))
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = lightGray, lightGray
	p.Add(g)
	return &figure{p: p}
}

// noData marks a plot that has nothing to show.
func (f *figure) noData() *figure {
	f.p.Title.Text += " — no data"
	f.p.X.Min, f.p.X.Max, f.p.Y.Min, f.p.Y.Max = 0, 1, 0, 1
	return f
}

// add appends a legend line with the label in full.
func (f *figure) add(label string, thumbs ...plot.Thumbnailer) {
	f.entries = append(f.entries, legendEntry{label, thumbs})
}

// head is a legend line naming the group of the lines that follow.
func (f *figure) head(label string) { f.add(strings.ToUpper(label[:1]) + label[1:] + ":") }

// legends lays the entries out in as few columns, at as large a font, as
// fit the height and maxLegendWidth: 12 pt in one column for a few, down
// to 8 pt in two.
func (f *figure) legends(dc draw.Canvas, height vg.Length) ([]plot.Legend, vg.Length) {
	var ls []plot.Legend
	var width vg.Length
	for _, cols := range []int{1, 2} {
		for _, size := range []float64{12, 10, 9, 8} {
			ls, width = f.columns(dc, cols, vg.Points(size))
			if fits(ls, dc, height) && width <= maxLegendWidth {
				return ls, width
			}
		}
	}
	return ls, width
}

// columns splits the entries into cols legends in order, returning them
// and their total width.
func (f *figure) columns(dc draw.Canvas, cols int, size vg.Length) ([]plot.Legend, vg.Length) {
	per := (len(f.entries) + cols - 1) / cols
	var ls []plot.Legend
	var width vg.Length
	for i := 0; i < len(f.entries); i += per {
		l := plot.NewLegend()
		sans(&l.TextStyle, size)
		l.Top, l.Left = true, true
		l.ThumbnailWidth = 2 * size
		l.Padding = size / 4
		for _, e := range f.entries[i:min(i+per, len(f.entries))] {
			l.Add(e.label, e.thumbs...)
		}
		r := l.Rectangle(dc)
		width += r.Max.X - r.Min.X + vg.Points(10)
		ls = append(ls, l)
	}
	return ls, width
}

func fits(ls []plot.Legend, dc draw.Canvas, height vg.Length) bool {
	for _, l := range ls {
		if r := l.Rectangle(dc); r.Max.Y-r.Min.Y > height {
			return false
		}
	}
	return true
}

// png renders the figure. gonum/plot panics on some degenerate input; that
// becomes an error.
func (f *figure) png() (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: %v", r)
		}
	}()
	c := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(plotDPI))
	dc := draw.New(c)
	area := dc
	if len(f.entries) > 0 {
		pad := vg.Points(10)
		top := f.p.Title.TextStyle.Height(f.p.Title.Text) + f.p.Title.Padding + pad
		ls, w := f.legends(dc, plotHeight-top-pad)
		x := plotWidth - w
		for _, l := range ls {
			l.Draw(draw.Crop(dc, x, 0, pad, -top))
			r := l.Rectangle(dc)
			x += r.Max.X - r.Min.X + pad
		}
		area = draw.Crop(dc, 0, -w-pad, 0, 0)
	}
	f.p.Draw(area)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// glyph is a filled or outlined marker style.
func glyph(c color.Color, shape draw.GlyphDrawer, radius float64) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Shape: shape, Radius: vg.Points(radius)}
}

// series is a miner's place in the legends of weights.png and tflops.png;
// i picks its colour and shape, the same in both.
type series struct {
	name, group string
	i           int
}

// Legend groups of miners.
const (
	honestGroup    = "honest miners"
	adversaryGroup = "adversary miners"
)

// minerSeries orders the miners for a legend: honest ones first, fastest
// profile first, then adversaries by class.
func minerSeries(s *Summary) []series {
	nodes := nodeByName(s)
	ms := miners(s)
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := nodes[ms[i]], nodes[ms[j]]
		if (a.Adversary == "") != (b.Adversary == "") {
			return a.Adversary == ""
		}
		if a.Adversary != b.Adversary {
			return a.Adversary < b.Adversary
		}
		return a.ProfileTFLOPS > b.ProfileTFLOPS
	})
	out := make([]series, len(ms))
	for i, m := range ms {
		out[i] = series{name: m, group: honestGroup, i: i}
		if nodes[m].Adversary != "" {
			out[i].group = adversaryGroup
		}
	}
	return out
}

// addSeries adds a series' legend line, headed by its group's when it
// starts one.
func (f *figure) addSeries(sr series, label string, thumbs ...plot.Thumbnailer) {
	if f.group != sr.group {
		f.group = sr.group
		f.head(sr.group)
	}
	f.add(label, thumbs...)
}

// weightsPlot draws each miner's consensus weight over the epochs of the
// run, numbered from the one it started in.
func weightsPlot(s *Summary) *figure {
	f := newFigure("Consensus weight per miner", "epoch of the run", "consensus weight")
	nodes := nodeByName(s)
	epochs := sortedEpochs(s)
	ymax := 0.0
	for _, sr := range minerSeries(s) {
		var xys plotter.XYs
		for _, e := range epochs {
			w, ok := epochWeight(e, sr.name)
			if !ok && len(e.Consensus) > 0 {
				w, ok = 0, true // left out of the consensus: it earned nothing that epoch
			}
			if ok && finite(w) {
				xys = append(xys, plotter.XY{X: float64(runEpoch(s, e.Epoch)), Y: w})
				ymax = max(ymax, w)
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue
		}
		l.Color = colorAt(sr.i)
		l.Width = vg.Points(2)
		if sr.group == adversaryGroup {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		pts.GlyphStyle = glyph(colorAt(sr.i), shapeAt(sr.i), 4)
		f.p.Add(l, pts)
		f.addSeries(sr, minerLabel(sr.name, nodes), l, pts)
	}
	if len(f.entries) == 0 {
		return f.noData()
	}
	// One labelled tick per epoch (thinned past a dozen).
	step := (len(epochs) + 11) / 12
	var ticks []plot.Tick
	for i, e := range epochs {
		t := plot.Tick{Value: float64(runEpoch(s, e.Epoch))}
		if i%step == 0 {
			t.Label = strconv.FormatUint(runEpoch(s, e.Epoch), 10)
		}
		ticks = append(ticks, t)
	}
	f.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	f.p.X.Min = float64(runEpoch(s, epochs[0].Epoch)) - 0.25
	f.p.X.Max = float64(runEpoch(s, epochs[len(epochs)-1].Epoch)) + 0.25
	f.p.Y.Min = 0
	f.p.Y.Max = 1.08 * ymax
	if ymax <= 0 {
		f.p.Y.Max = 1
	}
	return f
}

// tflopsPlot draws each miner's median measured TFLOPS against the TFLOPS
// the simulation paces it to, each in its colour and shape from
// weights.png.
func tflopsPlot(s *Summary) *figure {
	f := newFigure("Measured vs simulated throughput", "simulated TFLOPS", "measured TFLOPS (median)")
	nodes := nodeByName(s)
	measured := measuredTFLOPS(s)
	type point struct {
		sr series
		xy plotter.XY
	}
	var pts []point
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, sr := range minerSeries(s) {
		n := nodes[sr.name]
		y, ok := measured[sr.name]
		if !ok || !finite(n.SimTFLOPS) || n.SimTFLOPS <= 0 {
			continue
		}
		pts = append(pts, point{sr, plotter.XY{X: n.SimTFLOPS, Y: y}})
		lo, hi = min(lo, n.SimTFLOPS, y), max(hi, n.SimTFLOPS, y)
	}
	if len(pts) == 0 {
		return f.noData()
	}
	// Both axes share one range so that y = x is the diagonal. Log axes
	// plot log10 values on linear axes with decade ticks: gonum/plot
	// centres axis labels at the linear midpoint, which a LogScale pushes
	// to the top.
	logAxes := hi/lo > 10
	if logAxes {
		lo, hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		for i := range pts {
			pts[i].xy = plotter.XY{X: math.Log10(pts[i].xy.X), Y: math.Log10(pts[i].xy.Y)}
		}
		ticks := plot.ConstantTicks(decadeTicks(lo, hi))
		f.p.X.Tick.Marker, f.p.Y.Tick.Marker = ticks, ticks
		f.p.X.Label.Text += " (log scale)"
		f.p.Y.Label.Text += " (log scale)"
	} else {
		lo, hi = 0, 1.1*hi
	}
	f.p.X.Min, f.p.X.Max, f.p.Y.Min, f.p.Y.Max = lo, hi, lo, hi
	ref, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err == nil {
		ref.Color = gray
		ref.Dashes = []vg.Length{vg.Points(5), vg.Points(4)}
		f.p.Add(ref)
		f.add("y = x", ref)
	}
	for _, p := range pts {
		sc, err := plotter.NewScatter(plotter.XYs{p.xy})
		if err != nil {
			continue
		}
		sc.GlyphStyle = glyph(colorAt(p.sr.i), shapeAt(p.sr.i), 6)
		f.p.Add(sc)
		f.addSeries(p.sr, minerLabel(p.sr.name, nodes), sc)
	}
	return f
}

// knownKinds are Detection.Kind's values, in legend order.
var knownKinds = []string{"failed-round", "flag", "peer-score", "audit", "clipped"}

// detectionsPlot draws every detection in time, one row per adversary
// class, glyph and colour by kind; false positives are red crosses on a row
// of their own.
func detectionsPlot(s *Summary) *figure {
	title := fmt.Sprintf("Detections (false positives: %d)", len(s.FalsePositives))
	f := newFigure(title, "seconds since start", "adversary class")
	if len(s.Detections) == 0 && len(s.FalsePositives) == 0 {
		return f.noData()
	}
	nodes := nodeByName(s)
	rows := adversaryClasses(s, nodes)
	row := make(map[string]int, len(rows))
	for i, a := range rows {
		row[a] = i
	}
	fpRow := len(rows)
	if len(s.FalsePositives) > 0 {
		rows = append(rows, "false positive")
	}
	var kinds []string
	byKind := make(map[string]plotter.XYs)
	xmax := s.DurationSeconds
	for _, d := range s.Detections {
		if !finite(d.AtSeconds) {
			continue
		}
		kind := d.Kind
		if kind == "" {
			kind = "(unspecified)"
		}
		if _, ok := byKind[kind]; !ok {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], plotter.XY{X: d.AtSeconds, Y: float64(row[adversaryOf(d, nodes)])})
		xmax = max(xmax, d.AtSeconds)
	}
	// Known kinds keep their glyph from run to run.
	rank := func(k string) int {
		if i := slices.Index(knownKinds, k); i >= 0 {
			return i
		}
		return len(knownKinds)
	}
	sort.SliceStable(kinds, func(i, j int) bool {
		ri, rj := rank(kinds[i]), rank(kinds[j])
		return ri < rj || ri == rj && kinds[i] < kinds[j]
	})
	// Kinds sit a little apart within a row so that they do not hide each
	// other.
	for i, k := range kinds {
		xys := byKind[k]
		off := (float64(i) - float64(len(kinds)-1)/2) * 0.08
		for j := range xys {
			xys[j].Y += off
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			continue
		}
		sc.GlyphStyle = glyph(colorAt(i), shapeAt(i), 5)
		f.p.Add(sc)
		f.add(k, sc)
	}
	var fps plotter.XYs
	for _, d := range s.FalsePositives {
		if finite(d.AtSeconds) {
			fps = append(fps, plotter.XY{X: d.AtSeconds, Y: float64(fpRow)})
			xmax = max(xmax, d.AtSeconds)
		}
	}
	if len(fps) > 0 {
		if sc, err := plotter.NewScatter(fps); err == nil {
			sc.GlyphStyle = glyph(red, draw.CrossGlyph{}, 7)
			f.p.Add(sc)
			f.add("false positive", sc)
		}
	}
	f.p.NominalY(rows...)
	f.p.Y.Min, f.p.Y.Max = -0.5, float64(len(rows))-0.5
	f.p.X.Min, f.p.X.Max = 0, 1.03*max(xmax, 1)
	return f
}

// gossipPlot draws the histogram of challenge gossip latency with its
// percentiles as vertical lines.
func gossipPlot(s *Summary) *figure {
	f := newFigure("Challenge gossip latency", "latency (ms)", "samples")
	var vs plotter.Values
	for _, v := range s.Gossip.Samples {
		if finite(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return f.noData()
	}
	f.p.Title.Text = fmt.Sprintf("Challenge gossip latency (n = %d)", len(vs))
	bins := min(max(int(math.Sqrt(float64(len(vs)))), 10), 50)
	h, err := plotter.NewHist(vs, bins)
	if err != nil {
		return f.noData()
	}
	h.FillColor = color.RGBA{R: 158, G: 202, B: 225, A: 255}
	h.LineStyle.Color = blue
	f.p.Add(h)
	ymax := 0.0
	for _, b := range h.Bins {
		ymax = max(ymax, b.Weight)
	}
	ymax *= 1.1
	f.p.Y.Min, f.p.Y.Max = 0, ymax
	f.add("samples", h)
	p50, p90, p99 := latency(s)
	for _, q := range []struct {
		name string
		v    float64
		c    color.Color
	}{{"p50", p50, blue}, {"p90", p90, orange}, {"p99", p99, red}} {
		if !finite(q.v) {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: q.v, Y: 0}, {X: q.v, Y: ymax}})
		if err != nil {
			continue
		}
		l.Color = q.c
		l.Width = vg.Points(2)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		f.p.Add(l)
		f.add(fmt.Sprintf("%s = %s ms", q.name, fmtMS(q.v)), l)
	}
	return f
}

// decadeTicks are ticks for an axis of log10 values from lo to hi (whole
// numbers): labelled decades and unlabelled 2..9 multiples between.
func decadeTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		ticks = append(ticks, plot.Tick{Value: k, Label: strconv.FormatFloat(math.Pow(10, k), 'g', -1, 64)})
		for j := 2.0; j < 10 && k < hi; j++ {
			ticks = append(ticks, plot.Tick{Value: k + math.Log10(j)})
		}
	}
	return ticks
}

// fmtMS formats milliseconds with precision to suit their size.
func fmtMS(v float64) string {
	switch {
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
