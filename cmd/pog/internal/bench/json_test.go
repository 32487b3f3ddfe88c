package bench

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/scoring"
)

// parse is cmd/pog's flag parsing less the range checks, which cmd/pog's
// tests drive through its command table.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		return 2, false
	}
	return 0, true
}

// runArgs runs `pog bench` with args.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb strings.Builder
	code = Run(args, &out, &errb, parse)
	return code, out.String(), errb.String()
}

// TestBenchJSONReproducible re-derives a bench round from its --json output
// and the output file alone, as an independent implementation would: the
// parameters decode to the printed nonce and miner, the secret opens H(s),
// the indices follow from secret, root and parameters, and the batch proof
// proves the sampled tiles of the output under the root.
func TestBenchJSONReproducible(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.bin")
	code, out, errs := runArgs("--size", "128", "--tile", "1024", "--seed", "s2", "--output", path, "--json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	unhex := func(field, s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s %q: %v", field, s, err)
		}
		return b
	}
	enc := unhex("params", r.Params)
	p, err := proof.DecodeParams(enc)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(p.Nonce[:]) != r.Nonce || hex.EncodeToString(p.Miner) != r.MinerHex {
		t.Fatalf("params carry nonce %x miner %x; printed %s, %s", p.Nonce, p.Miner, r.Nonce, r.MinerHex)
	}
	if id, err := peer.IDFromBytes(p.Miner); err != nil || id.String() != r.Miner {
		t.Fatalf("miner bytes are not the peer ID %s: %v", r.Miner, err)
	}
	secret, root := [32]byte(unhex("secret", r.Secret)), commit.CV(unhex("root", r.Root))
	if c := sample.Commit(secret); hex.EncodeToString(c[:]) != r.SecretCommitment {
		t.Fatalf("H(secret) = %x, printed %s", c, r.SecretCommitment)
	}
	idx := sample.Indices(secret, root, enc, p.Tiles(), r.Samples)
	if !slices.Equal(idx, r.Indices) || len(idx) != r.Samples {
		t.Fatalf("indices %v, printed %v", idx, r.Indices)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([]commit.CV, len(idx))
	for i, x := range idx {
		leaves[i] = commit.TileCV(data[x*uint64(p.TileBytes()):][:p.TileBytes()], x)
	}
	pr, err := commit.DecodeProof(unhex("batch_proof", r.BatchProof))
	if err != nil {
		t.Fatal(err)
	}
	if err := commit.Verify(root, p.Tiles(), idx, leaves, pr); err != nil {
		t.Fatalf("printed batch proof: %v", err)
	}
}

// The --json output carries what tflops is compared with: scoring's
// reference GPU and class table, at the run's precision.
func TestBenchJSONReference(t *testing.T) {
	c := scoring.DefaultConfig()
	for _, prec := range []string{"fp16", "fp32"} {
		code, out, errs := runArgs("--size", "128", "--tile", "1024", "--precision", prec, "--json", "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", prec, code, errs)
		}
		var r benchResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		ref, class := c.Reference.GPUFP16TFLOPS, func(g scoring.GPUClass) float64 { return g.FP16TFLOPS }
		if prec == "fp32" {
			ref, class = c.Reference.GPUFP32TFLOPS, func(g scoring.GPUClass) float64 { return g.FP32TFLOPS }
		}
		if r.ReferenceTFLOPS != ref || r.ReferenceFraction != r.TFLOPS/ref || !strings.Contains(r.ReferenceSource, prec) {
			t.Errorf("%s: reference %q %v, fraction %v of %v TFLOP/s", prec, r.ReferenceSource, r.ReferenceTFLOPS, r.ReferenceFraction, r.TFLOPS)
		}
		if len(r.ReferenceClasses) != len(c.Classes) {
			t.Fatalf("%s: classes %v", prec, r.ReferenceClasses)
		}
		for i, g := range c.Classes {
			if r.ReferenceClasses[i] != (benchClass{g.Name, class(g)}) {
				t.Errorf("%s: class %d is %v, the table has %s %v", prec, i, r.ReferenceClasses[i], g.Name, class(g))
			}
		}
		if r.VerifyTimeRatio != r.VerifySeconds/r.GemmSeconds {
			t.Errorf("%s: time ratio %v of %v ÷ %v", prec, r.VerifyTimeRatio, r.VerifySeconds, r.GemmSeconds)
		}
	}
}

// The summary puts the time ratio beside the ops ratio and names the
// table's slowest class.
func TestPrintBenchExplains(t *testing.T) {
	c := scoring.DefaultConfig()
	r := &benchResult{Precision: "fp16", GemmSeconds: 0.116, VerifySeconds: 0.152, VerifyCostRatio: 0.0062, TFLOPS: 0.148, Verified: true}
	r.VerifyTimeRatio = r.VerifySeconds / r.GemmSeconds
	r.compare(c, proof.FP16)
	slowest := c.Classes[0]
	for _, g := range c.Classes {
		if g.FP16TFLOPS < slowest.FP16TFLOPS {
			slowest = g
		}
	}
	var b strings.Builder
	printBench(&b, r)
	for _, want := range []string{"multiply   116ms", "verify     152ms", "took 1.31× the multiply's time for 0.62 % of its operations",
		"costs 211× a multiply FLOP", "% of the reference GPU", "of the slowest class in the table (" + slowest.Name + ")", "verdict    VERIFIED"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

func TestDurRoundsToThreeDigits(t *testing.T) {
	for s, want := range map[float64]string{0: "0s", 57e-9: "57ns", 341.862e-6: "342µs", 0.116: "116ms", 0.0351234: "35.1ms",
		16.402434: "16.4s", 3723.4: "1h2m0s", math.Inf(1): "?"} {
		if got := dur(s); got != want {
			t.Errorf("dur(%v) = %q, want %q", s, got, want)
		}
	}
}
