package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pog-network/pog/protocol/scoring"
)

func TestBenchHostVerifiesAllThreeProofs(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Run([]string{"--host", "--json", "--quiet", "--seed", "t", "--plot-dir", dir,
		"--cpu-steps", "1024", "--cpu-segment", "64", "--ram-mib", "1", "--ram-steps", "256", "--ram-segment", "16",
		"--plot-mib", "1", "--plot-walks", "2", "--plot-steps", "32", "--plot-segment", "4"}, &out, &errb, parse)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r hostBenchResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]hostProof{"cpu": r.CPU.hostProof, "ram": r.RAM.hostProof, "storage": r.Storage.hostProof} {
		if !p.Verified || p.Samples == 0 || p.StepNs <= 0 || p.Credit <= 0 || p.Credit > 1 || p.VerifySeconds <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if r.RAM.DatasetBytes != 1<<20 || r.RAM.CreditedBytes > float64(r.RAM.DatasetBytes) || r.RAM.RecomputedStepNs <= 0 || r.RAM.OnDiskStepNs <= 0 {
		t.Errorf("ram: %+v", r.RAM)
	}
	if r.Storage.PlotBytes != 1<<20 || r.Storage.BuildBps <= 0 || r.Storage.RegeneratedStepNs <= 0 {
		t.Errorf("storage: %+v", r.Storage)
	}
	if !(r.Parts.CPU > 0 && r.Parts.CPU < 1 && r.Parts.RAM > 0 && r.Parts.Storage > 0) {
		t.Errorf("score parts of a small host: %+v", r.Parts)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the plot was not removed: %v", left)
	}
	checkPartTerms(t, &r)
}

// checkPartTerms: each host part comes with its terms, against the
// reference host's figures, and the summary says each as proven of them.
func checkPartTerms(t *testing.T, r *hostBenchResult) {
	ref := scoring.DefaultConfig().Reference
	refs := map[string]float64{"cpu": float64(ref.CPUCores) * ref.CPUGHz, "ram capacity": float64(ref.RAMBytes),
		"ram bandwidth": ref.RAMGBps, "storage capacity": float64(ref.StorageBytes), "storage speed": ref.StorageMBps}
	values := map[string]float64{"cpu": r.Parts.CPU, "ram": r.Parts.RAM, "storage": r.Parts.Storage}
	if len(r.PartTerms) != len(values) {
		t.Fatalf("part terms %+v", r.PartTerms)
	}
	var text bytes.Buffer
	printBenchHost(&text, r)
	for _, p := range r.PartTerms {
		if v, ok := values[p.Name]; !ok || p.Value != v || len(p.Terms) == 0 {
			t.Errorf("part %s = %v with %d terms; parts %+v", p.Name, p.Value, len(p.Terms), r.Parts)
		}
		for _, tm := range p.Terms {
			if tm.Raw <= 0 || tm.Reference != refs[tm.Name] {
				t.Errorf("%s: raw %v, reference %v", tm.Name, tm.Raw, tm.Reference)
			}
			if want := "proven " + quantity(tm.Raw, tm.Unit) + " of the reference host's " + quantity(tm.Reference, tm.Unit); !strings.Contains(text.String(), want) {
				t.Errorf("no %q in\n%s", want, text.String())
			}
		}
	}
}

func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		v          float64
		unit, want string
	}{{2e12, "bytes", "2 TB"}, {27.94e6, "bytes", "27.9 MB"}, {512, "bytes", "512 bytes"},
		{5242.88, "MB/s", "5243 MB/s"}, {999.7, "GB/s", "1000 GB/s"}, {0.0885, "GB/s", "0.0885 GB/s"}} {
		if got := quantity(c.v, c.unit); got != c.want {
			t.Errorf("quantity(%v, %s) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
