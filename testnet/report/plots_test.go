package report

import (
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// crowded is a run of 8 honest miners and 22 adversarial ones, with long
// names, over three epochs numbered as wall-clock epochs are.
func crowded() *Summary {
	s := &Summary{EpochLength: "40s", StartedAt: "2025-02-19T21:19:50Z"}
	profiles := []Node{{Profile: "H200", ProfileTFLOPS: 610}, {Profile: "H100", ProfileTFLOPS: 570},
		{Profile: "A100", ProfileTFLOPS: 238.8}, {Profile: "RTX4090", ProfileTFLOPS: 157}}
	for i := range 30 {
		n := profiles[i%len(profiles)]
		n.Role, n.Name, n.SimTFLOPS = "miner", fmt.Sprintf("miner-%d", i+1), n.ProfileTFLOPS*1e-6
		if i >= 8 {
			n.Adversary = fmt.Sprintf("adversary-class-%02d", i)
			n.Name = n.Adversary + "-identity"
		}
		s.Nodes = append(s.Nodes, n)
	}
	// 2025-02-19T21:19:50Z is in epoch 43499999 of 40 s: the run's 0.
	for e := uint64(43500000); e <= 43500002; e++ {
		ep := Epoch{Epoch: e, Consensus: map[string]float64{}}
		for i, n := range s.Nodes {
			ep.Consensus[n.Name] = float64(i+1) / 465
			s.Rounds = append(s.Rounds, Round{Epoch: e, Miner: n.Name, Verified: true, TFLOPS: n.SimTFLOPS})
		}
		s.Epochs = append(s.Epochs, ep)
	}
	return s
}

// Each of 30 miners has its own pair of colour and shape, the same in
// weights.png and tflops.png; honest miners come first, then adversaries,
// each group under its heading.
func TestMinerSeries(t *testing.T) {
	s := crowded()
	seen := map[string]string{}
	var groups []string
	for _, sr := range minerSeries(s) {
		r, g, b, _ := colorAt(sr.i).RGBA()
		key := fmt.Sprintf("%d,%d,%d %T", r, g, b, shapeAt(sr.i))
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s share colour and shape %s", other, sr.name, key)
		}
		seen[key] = sr.name
		if len(groups) == 0 || groups[len(groups)-1] != sr.group {
			groups = append(groups, sr.group)
		}
		if want := nodeByName(s)[sr.name].Adversary != ""; (sr.group == adversaryGroup) != want {
			t.Errorf("%s in group %q", sr.name, sr.group)
		}
	}
	if !slices.Equal(groups, []string{honestGroup, adversaryGroup}) {
		t.Errorf("groups in order %v", groups)
	}
	for _, c := range palette {
		if c == color.Color(red) {
			t.Error("the palette holds the false positives' red")
		}
	}
}

// weights.png names every miner in full under its group's heading, in a
// legend that fits beside the data, over epochs numbered from the run's.
func TestWeightsPlotLegible(t *testing.T) {
	s := crowded()
	f := weightsPlot(s)
	var labels []string
	for _, e := range f.entries {
		labels = append(labels, e.label)
	}
	legend := strings.Join(labels, "\n")
	if !strings.HasPrefix(legend, "Honest miners:\nminer-1 (H200)\n") || !strings.Contains(legend, "\nAdversary miners:\n") {
		t.Errorf("legend not grouped:\n%s", legend)
	}
	for _, n := range s.Nodes {
		if !slices.Contains(labels, minerLabel(n.Name, nodeByName(s))) {
			t.Errorf("legend lacks %q in full", minerLabel(n.Name, nodeByName(s)))
		}
	}
	dc := draw.New(vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(plotDPI)))
	height := plotHeight - f.p.Title.TextStyle.Height(f.p.Title.Text)
	ls, width := f.legends(dc, height)
	if !fits(ls, dc, height) || width > maxLegendWidth {
		t.Errorf("legend of %d lines does not fit: %d columns, %v wide", len(labels), len(ls), width)
	}
	var ticks []string
	for _, tk := range f.p.X.Tick.Marker.(plot.ConstantTicks) {
		ticks = append(ticks, tk.Label)
	}
	if !slices.Equal(ticks, []string{"1", "2", "3"}) {
		t.Errorf("epoch ticks %v, want the run's 1, 2, 3", ticks)
	}
}

// A miner the consensus leaves out (weight 0, as lazy's) is drawn at 0,
// not dropped from weights.png.
func TestWeightsPlotDrawsZeroWeight(t *testing.T) {
	s := crowded()
	gone := s.Nodes[len(s.Nodes)-1].Name
	for i := range s.Epochs {
		delete(s.Epochs[i].Consensus, gone)
	}
	f := weightsPlot(s)
	label := minerLabel(gone, nodeByName(s))
	if !slices.ContainsFunc(f.entries, func(e legendEntry) bool { return e.label == label }) {
		t.Fatalf("legend lacks %q, whose weight is 0 in every epoch", label)
	}
}

// Epochs count from the one the run started in, or from the first
// summarised one when the start is unknown.
func TestRunEpoch(t *testing.T) {
	s := crowded()
	if got := runEpoch(s, 43500002); got != 3 {
		t.Errorf("run epoch %d, want 3", got)
	}
	s.StartedAt = ""
	if got := runEpoch(s, 43500002); got != 2 {
		t.Errorf("without a start: run epoch %d, want 2", got)
	}
}
