package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
)

// benchJSON runs pog bench --json --quiet with args and decodes its output.
func benchJSON(t *testing.T, wantCode int, args ...string) *benchResult {
	t.Helper()
	code, out, errs := runArgs(append(args, "--json", "--quiet")...)
	if code != wantCode {
		t.Fatalf("%v: exit %d, want %d: %s", args, code, wantCode, errs)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return &r
}

// checkCapacity: the capacity figures follow from the node's defaults and
// the first kernel's CPU time by the formula the summary states.
func checkCapacity(t *testing.T, r *benchResult) {
	t.Helper()
	v := config.DefaultConfig().Validator
	slot := v.RoundTarget.Duration + v.RoundTarget.Duration/4
	if r.RoundTargetSeconds != v.RoundTarget.Seconds() || r.SlotSeconds != slot.Seconds() || r.DutyCycle != v.DutyCycle {
		t.Errorf("round target %v, slot %v, duty %v; the node's %v, %v, %v", r.RoundTargetSeconds, r.SlotSeconds, r.DutyCycle,
			v.RoundTarget, slot, v.DutyCycle)
	}
	if r.VerifyCoreSeconds < 0 || r.CoreSecondsPerMinerHour != 3600*r.DutyCycle/r.SlotSeconds*r.VerifyCoreSeconds {
		t.Errorf("%v core-s per round, %v per miner-hour", r.VerifyCoreSeconds, r.CoreSecondsPerMinerHour)
	}
	for _, k := range append([]verifyRun{{Kernel: "top level", CoreSeconds: r.VerifyCoreSeconds, MinersPerCore: r.MinersPerCore}}, r.VerifyKernels...) {
		want := 0.0
		if k.CoreSeconds > 0 {
			want = r.SlotSeconds / (r.DutyCycle * k.CoreSeconds)
		}
		if k.CoreSeconds < 0 || k.MinersPerCore != want {
			t.Errorf("%s: %v core-s, %v miners per core; want %v", k.Kernel, k.CoreSeconds, k.MinersPerCore, want)
		}
	}
}

// Every kernel this CPU runs checks the round, in the order
// proof.VerifyKernels gives, each VERIFIED; the top-level verify figures
// are the first kernel's.
func TestBenchVerifiesWithEveryKernel(t *testing.T) {
	r := benchJSON(t, 0, "--size", "256", "--tile", "4096", "--seed", "k")
	names := make([]string, len(r.VerifyKernels))
	for i, k := range r.VerifyKernels {
		names[i] = k.Kernel
		if !k.Verified || k.Reason != "" || k.Seconds <= 0 {
			t.Errorf("kernel %+v", k)
		}
	}
	if !slices.Equal(names, proof.VerifyKernels()) {
		t.Fatalf("kernels %v, want %v", names, proof.VerifyKernels())
	}
	first := r.VerifyKernels[0]
	if !r.Verified || r.VerifySeconds != first.Seconds || r.VerifyCoreSeconds != first.CoreSeconds || r.MinersPerCore != first.MinersPerCore {
		t.Errorf("top level %v %v %v %v, first kernel %+v", r.Verified, r.VerifySeconds, r.VerifyCoreSeconds, r.MinersPerCore, first)
	}
	checkCapacity(t, r)
}

// --verify-kernel times the one kernel it names; an unknown name is a
// usage error listing the kernels there are.
func TestBenchVerifyKernelFlag(t *testing.T) {
	r := benchJSON(t, 0, "--size", "128", "--tile", "1024", "--verify-kernel", "generic")
	if len(r.VerifyKernels) != 1 || r.VerifyKernels[0].Kernel != "generic" || !r.Verified {
		t.Errorf("kernels %+v", r.VerifyKernels)
	}
	checkCapacity(t, r)
	code, _, errs := runArgs("--size", "128", "--tile", "1024", "--verify-kernel", "nope", "--quiet")
	if code != 2 || !strings.Contains(errs, `unknown verify kernel "nope"`) || !strings.Contains(errs, "generic") {
		t.Errorf("exit %d: %q", code, errs)
	}
}

// A cheating miner fails under every kernel, for the same reason.
func TestBenchEveryKernelCatchesCheat(t *testing.T) {
	for _, adv := range []string{"lazy", "tamper"} {
		r := benchJSON(t, 1, "--size", "256", "--tile", "4096", "--adversary", adv)
		if r.Verified || r.Reason == "" || len(r.VerifyKernels) != len(proof.VerifyKernels()) {
			t.Fatalf("%s: verified %v, reason %q, kernels %+v", adv, r.Verified, r.Reason, r.VerifyKernels)
		}
		for _, k := range r.VerifyKernels {
			if k.Verified || k.Reason != r.Reason {
				t.Errorf("%s: kernel %+v, first kernel's reason %q", adv, k, r.Reason)
			}
		}
	}
}

// The summary prints each kernel's times and the capacity with the inputs
// it is computed from.
func TestPrintBenchCapacity(t *testing.T) {
	r := &benchResult{Precision: "fp16", GemmSeconds: 1, Verified: true,
		VerifyKernels: []verifyRun{{Kernel: "fast", Seconds: 0.0852, CoreSeconds: 0.168}, {Kernel: "generic", Seconds: 0.89, CoreSeconds: 1.75}}}
	c := nodeCapacity(0)
	for i := range r.VerifyKernels {
		r.VerifyKernels[i].MinersPerCore = c.miners(r.VerifyKernels[i].CoreSeconds)
	}
	r.VerifySeconds, r.VerifyCoreSeconds, r.capacity = 0.0852, 0.168, nodeCapacity(0.168)
	var b strings.Builder
	printBench(&b, r)
	for _, want := range []string{"verify     85.2ms", "kernels    fast 85.2ms 0.168 core-s, generic 890ms 1.75 core-s",
		fmt.Sprintf("= %.3gs ÷ (%.3g × 0.168) = %.3g miners under rounds", r.SlotSeconds, r.DutyCycle, r.SlotSeconds/(r.DutyCycle*0.168)),
		fmt.Sprintf("%.3g core-s per miner-hour", r.CoreSecondsPerMinerHour),
		fmt.Sprintf("fast %.3g, generic %.3g", r.VerifyKernels[0].MinersPerCore, r.VerifyKernels[1].MinersPerCore)} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
