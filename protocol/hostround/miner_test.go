package hostround

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"github.com/pog-network/pog/proof/host/plot"
	"github.com/pog-network/pog/proof/sample"
)

// testChallenge is the challenge a script's challenge command describes:
// kind (cpu or storage), miner, chains, steps, segment, samples, root-by
// (ms), secret (its first byte, committed to), and for a CPU round run to
// a window, window and run (ms).
func testChallenge(t *testing.T, d *datadriven.TestData) []byte {
	kind, miner := "cpu", "miner"
	chains, steps, segment, samples, rootBy, secret := 2, 1000, 10, 8, 1500, 7
	window, run := 0, 0
	d.MaybeScanArgs(t, "window", &window)
	d.MaybeScanArgs(t, "run", &run)
	d.MaybeScanArgs(t, "kind", &kind)
	d.MaybeScanArgs(t, "miner", &miner)
	d.MaybeScanArgs(t, "chains", &chains)
	d.MaybeScanArgs(t, "steps", &steps)
	d.MaybeScanArgs(t, "segment", &segment)
	d.MaybeScanArgs(t, "samples", &samples)
	d.MaybeScanArgs(t, "root-by", &rootBy)
	d.MaybeScanArgs(t, "secret", &secret)
	sh := host.Shape{Chains: uint64(chains), Steps: uint64(steps), Segment: uint64(segment)}
	var pr Proof = CPUProof{Params: &cpuwork.Params{Miner: []byte(miner), TableLog: cpuwork.MinTableLog, Shape: sh,
		WindowMs: uint32(window), RunMs: uint32(run)}}
	if kind == "storage" {
		pl := plot.Plot{Miner: []byte(miner), BlockLog: 12, Rounds: 2, Blocks: 1 << 20}
		pr = PlotProof{Audit: &plot.Audit{Plot: pl, Shape: sh}}
	}
	ch := Challenge{Commitment: sample.Commit([32]byte{byte(secret)}), Samples: uint16(samples), RootByMs: uint32(rootBy), Proof: pr}
	b := ch.Encode()
	if d.HasArg("truncated") {
		b = b[:challengeHead-1]
	}
	return b
}

func printMinerActions(acts []any) string {
	var b strings.Builder
	for _, a := range acts {
		switch a := a.(type) {
		case Prove:
			sh := a.Challenge.Proof.Dims()
			fmt.Fprintf(&b, "prove %s %d×%d/%d", a.Challenge.Proof.Name(), sh.Chains, sh.Steps, sh.Segment)
			if c, ok := Windowed(a.Challenge.Proof); ok {
				fmt.Fprintf(&b, " for %v of a %v window", c.Run(), c.Window())
			}
			fmt.Fprintf(&b, ", root by %dms\n", a.Challenge.RootByMs)
		case SendRoot:
			fmt.Fprintf(&b, "send-root %x", a.Root[:4])
			if a.Steps > 0 {
				fmt.Fprintf(&b, ", %d steps a chain", a.Steps)
			}
			b.WriteString("\n")
		case Open:
			fmt.Fprintf(&b, "open %v\n", a.Segments)
		case Served:
			if a.Err != nil {
				fmt.Fprintf(&b, "served: not: %v\n", a.Err)
			} else {
				b.WriteString("served\n")
			}
		default:
			fmt.Fprintf(&b, "%T\n", a)
		}
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

// errArg is the script's err argument as an error, nil without one.
func errArg(t *testing.T, d *datadriven.TestData) error {
	if !d.HasArg("err") {
		return nil
	}
	var s string
	d.ScanArgs(t, "err", &s)
	return errors.New(s)
}

// TestMinerData runs the miner's scripts in testdata/miner.txt.
func TestMinerData(t *testing.T) {
	var m *Miner
	datadriven.RunTest(t, "testdata/miner.txt", func(t *testing.T, d *datadriven.TestData) string {
		var acts []any
		switch d.Cmd {
		case "plan":
			lag := 2000
			d.MaybeScanArgs(t, "lag", &lag)
			p := MinerPlan{Miner: []byte("miner"), Lag: msDur(lag)}
			if d.HasArg("max-steps") {
				var most uint64
				d.ScanArgs(t, "max-steps", &most)
				p.Admit = func(pr Proof) error {
					if s := pr.Dims().Steps; s > most {
						return fmt.Errorf("%d steps: a plan gives at most %d", s, most)
					}
					return nil
				}
			}
			m = NewMiner(p)
			return "ok\n"
		case "challenge":
			acts = m.Step(Challenged{Frame: testChallenge(t, d)})
		case "proved":
			var steps uint64
			d.MaybeScanArgs(t, "steps", &steps)
			acts = m.Step(Proved{Root: commit.CV{0xab, 0xcd}, Steps: steps, Err: errArg(t, d)})
		case "reveal":
			secret := 7
			d.MaybeScanArgs(t, "secret", &secret)
			s := [32]byte{byte(secret)}
			frame := s[:]
			if d.HasArg("short") {
				frame = frame[:31]
			}
			acts = m.Step(Revealed{Frame: frame, Err: errArg(t, d)})
		case "sent":
			acts = m.Step(Sent{Err: errArg(t, d)})
		case "closed":
			acts = m.Step(Closed{Err: errArg(t, d)})
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		out := printMinerActions(acts)
		if m.Done() {
			out += "done\n"
		}
		return out
	})
}

func msDur(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// TestBothSidesSampleAlike plays a round through both machines: the
// segments the miner opens are the ones the validator fetches, and the
// honest opening verifies.
func TestBothSidesSampleAlike(t *testing.T) {
	plan, states, leaves, root := cpuRound(t)
	pr := CPUProof{Params: &cpuwork.Params{Miner: []byte("miner"), TableLog: cpuwork.MinTableLog, Shape: plan.Shape}}
	ch := Challenge{Commitment: sample.Commit(plan.Secret), Samples: uint16(plan.Samples), RootByMs: 1000, Proof: pr}
	m := NewMiner(MinerPlan{Miner: []byte("miner"), Lag: time.Second})
	if acts := m.Step(Challenged{Frame: ch.Encode()}); len(acts) != 1 {
		t.Fatalf("challenge: %#v", acts)
	} else if _, ok := acts[0].(Prove); !ok {
		t.Fatalf("challenge: %#v", acts)
	}
	m.Step(Proved{Root: root})
	acts := m.Step(Revealed{Frame: plan.Secret[:]})
	open, ok := acts[0].(Open)
	if !ok {
		t.Fatalf("reveal: %#v", acts)
	}
	v, err := NewValidator(plan)
	if err != nil {
		t.Fatal(err)
	}
	v.Step(Start{})
	fetch := v.Step(Root{At: time.Millisecond, Root: root})[1].(Fetch)
	if fmt.Sprint(open.Segments) != fmt.Sprint(fetch.Segments) {
		t.Fatalf("miner opens %v, validator fetches %v", open.Segments, fetch.Segments)
	}
	op, err := host.Open(plan.Shape, states, leaves, open.Segments)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := op.MarshalBinary()
	if out := finish(t, v.Step(Opening{Bytes: b})); !out.Verified {
		t.Fatalf("honest opening: %+v", out)
	}
	if acts := m.Step(Sent{}); len(acts) != 1 || acts[0] != (Served{}) || !m.Done() {
		t.Fatalf("sent: %#v", acts)
	}
}
