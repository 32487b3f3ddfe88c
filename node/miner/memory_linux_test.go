//go:build linux

package miner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol/round"
)

// memShape is one step of the memory test: a 4 MiB output.
var memShape = proof.Params{Precision: proof.FP16, Batch: 1, M: 1024, K: 256, N: 1024, Tile: 128, Miner: []byte("memory-test")}

// TestMinerMemoryBound plays the miner's side of a round on the CPU
// backend with D = 1 and D = 50 steps, each in its own process, and
// requires the peak RSS not to grow with D: a step's output is hashed and
// freed, only its tile chaining values are kept, and the sampled tiles are
// recomputed. Keeping the outputs would add 49 × 4 MiB.
func TestMinerMemoryBound(t *testing.T) {
	if s := os.Getenv("POG_MEMORY_STEPS"); s != "" {
		steps, _ := strconv.Atoi(s)
		fmt.Printf("maxrss_kib=%d\n", playMinerSteps(t, steps))
		return
	}
	if testing.Short() {
		t.Skip("runs two child processes of about 50 steps in all")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory grows with allocations")
	}
	rss := func(steps int) int64 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMinerMemoryBound$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("POG_MEMORY_STEPS=%d", steps))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child with %d steps: %v\n%s", steps, err, out)
		}
		m := regexp.MustCompile(`maxrss_kib=(\d+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("child with %d steps reported no RSS:\n%s", steps, out)
		}
		v, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return v << 10
	}
	one, fifty := rss(1), rss(50)
	output := int64(memShape.OutputBytes())
	t.Logf("peak RSS: D=1 %.1f MiB, D=50 %.1f MiB (one step's output %.0f MiB)", float64(one)/(1<<20), float64(fifty)/(1<<20), float64(output)/(1<<20))
	if fifty-one > 10*output {
		t.Errorf("peak RSS grows with D: %d bytes more for 49 more steps", fifty-one)
	}
}

// playMinerSteps runs round.Miner with the node's step computation and a
// validator answering every root at once, then serves a 66-tile sample.
// It returns the process's peak RSS in KiB.
func playMinerSteps(t *testing.T, steps int) int64 {
	ctx := context.Background()
	m := &Miner{Env: Env{Backend: cpu.Backend{}}}
	secret := [32]byte{5}
	c := proof.Chain{ID: [32]byte{1}, Template: []proof.Params{memShape}, Steps: steps}
	mm, err := round.NewMiner(c)
	if err != nil {
		t.Fatal(err)
	}
	var params [][]proof.Params
	var leaves [][][]commit.CV
	var roots [][]commit.CV
	for acts := mm.Begin(); len(acts) > 0; {
		var next []any
		for _, a := range acts {
			switch a := a.(type) {
			case round.Compute:
				res := m.computeStep(ctx, a.Step, a.Params)
				if res.err != nil {
					t.Fatal(res.err)
				}
				params, leaves = append(params, a.Params), append(leaves, res.leaves)
				next = append(next, mm.Step(round.StepDone{Step: a.Step, Roots: res.roots})...)
			case round.SendRoot:
				if a.Step+2 < steps {
					next = append(next, mm.Step(round.BeaconIn{Step: a.Step, Beacon: proof.Beacon(secret, a.Step)})...)
				}
			case round.Commit:
				roots = a.Roots
			}
		}
		acts = next
	}
	if len(roots) != steps {
		t.Fatalf("%d of %d steps committed", len(roots), steps)
	}
	idx, err := c.Sample(secret, sample.Commit(secret), roots, 66)
	if err != nil {
		t.Fatal(err)
	}
	tile := make([]byte, memShape.TileBytes())
	for _, g := range c.Groups(idx) {
		if _, err := commit.Prove(leaves[g.Step][g.Sub], g.Tiles); err != nil {
			t.Fatal(err)
		}
		for _, x := range g.Tiles {
			if err := kernels.ComputeTile(ctx, m.Backend, params[g.Step][g.Sub], x, tile); err != nil {
				t.Fatal(err)
			}
			if commit.TileCV(tile, x) != leaves[g.Step][g.Sub][x] {
				t.Fatalf("recomputed tile %d of step %d differs from the one hashed", x, g.Step)
			}
		}
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}
