package round

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/sample"
)

// honest computes a chain's steps exactly as an honest miner would, with
// the reference product, keeping every step's leaves for proofs.
type honest struct {
	c       proof.Chain
	roots   [][]commit.CV
	leaves  [][][]commit.CV // step, sub
	params  [][]proof.Params
	beacons [][32]byte
	lazy    map[int]bool // steps whose even tiles were never computed
}

// tile is what the miner computed (and serves) for tile x of a step.
func (h *honest) tile(step int, p proof.Params, g *proof.Generator, x uint64, dst []byte) {
	if h.lazy[step] && x%2 == 0 {
		clear(dst)
		return
	}
	proof.EncodeTile(dst, proof.ReferenceTile(g, p, x))
}

func testChain(t *testing.T, d *datadriven.TestData) proof.Chain {
	steps, subs := 4, 1
	d.MaybeScanArgs(t, "steps", &steps)
	d.MaybeScanArgs(t, "subs", &subs)
	c := proof.Chain{Steps: steps}
	c.ID[0] = 7
	for s := 0; s < subs; s++ {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("miner")}
		p.Nonce[0] = byte(s + 1)
		c.Template = append(c.Template, p)
	}
	return c
}

// step computes step i's roots from the roots so far and the beacons seen.
func (h *honest) step(t *testing.T, i int) []commit.CV {
	ps, err := h.c.StepParams(i, h.roots, h.beacons)
	if err != nil {
		t.Fatal(err)
	}
	var roots []commit.CV
	var leaves [][]commit.CV
	for _, p := range ps {
		ls := make([]commit.CV, p.Tiles())
		g, _ := proof.NewGenerator(p)
		buf := make([]byte, p.TileBytes())
		for x := range ls {
			h.tile(i, p, g, uint64(x), buf)
			ls[x] = commit.TileCV(buf, uint64(x))
		}
		r, _ := commit.Root(ls)
		roots, leaves = append(roots, r), append(leaves, ls)
	}
	h.roots, h.leaves, h.params = append(h.roots, roots), append(h.leaves, leaves), append(h.params, ps)
	return roots
}

// tiles serves groups; tile number bad (0-based, −1 none) is corrupted.
func (h *honest) tiles(groups []proof.Group, bad int) ([][]byte, []commit.Proof) {
	var tiles [][]byte
	var proofs []commit.Proof
	for _, g := range groups {
		p := h.params[g.Step][g.Sub]
		gen, _ := proof.NewGenerator(p)
		for _, x := range g.Tiles {
			b := make([]byte, p.TileBytes())
			h.tile(g.Step, p, gen, x, b)
			if len(tiles) == bad {
				b[5] ^= 1
			}
			tiles = append(tiles, b)
		}
		pr, _ := commit.Prove(h.leaves[g.Step][g.Sub], g.Tiles)
		proofs = append(proofs, pr)
	}
	return tiles, proofs
}

func ms(t *testing.T, d *datadriven.TestData, key string) time.Duration {
	var v int
	d.ScanArgs(t, key, &v)
	return time.Duration(v) * time.Millisecond
}

func printActions(acts []any) string {
	var b strings.Builder
	for _, a := range acts {
		switch a := a.(type) {
		case SetTimer:
			fmt.Fprintf(&b, "set-timer %v\n", a.At)
		case SendBeacon:
			fmt.Fprintf(&b, "send-beacon step=%d %x\n", a.Step, a.Beacon[:4])
		case Reveal:
			b.WriteString("reveal\n")
		case Fetch:
			fmt.Fprintf(&b, "fetch %v in %d groups:", a.Indices, len(a.Groups))
			for _, g := range a.Groups {
				fmt.Fprintf(&b, " step%d/sub%d%v", g.Step, g.Sub, g.Tiles)
			}
			b.WriteString("\n")
		case Finish:
			o := a.Outcome
			if o.Verified {
				fmt.Fprintf(&b, "finish verified: %d steps, arrivals %v, %.4g TFLOPS sustained, %.4g peak, %d tiles ok, %d proofs, %d leaves\n",
					len(o.Roots), o.Arrivals, o.TFLOPS, o.PeakTFLOPS, len(o.Tiles), len(o.Proofs), len(o.Leaves))
			} else {
				bad := 0
				for _, tv := range o.Tiles {
					if !tv.OK {
						bad++
					}
				}
				kept := ""
				if o.BadTile != nil {
					kept = fmt.Sprintf(", bad tile %d kept (%d bytes)", o.BadTile.Index, len(o.BadTile.Data))
				}
				fmt.Fprintf(&b, "finish failed: %s (%d of %d tiles bad, %d leaves kept%s)\n", o.Reason, bad, len(o.Tiles), len(o.Leaves), kept)
			}
		case Compute:
			fmt.Fprintf(&b, "compute step=%d nonce=%x\n", a.Step, a.Params[0].Nonce[:4])
		case SendRoot:
			fmt.Fprintf(&b, "send-root step=%d %x\n", a.Step, a.Roots[0][:4])
		case Commit:
			fmt.Fprintf(&b, "commit %d steps\n", len(a.Roots))
		case Report:
			fmt.Fprintf(&b, "report %+v\n", a.Result)
		case Abort:
			fmt.Fprintf(&b, "abort: %s\n", a.Reason)
		default:
			fmt.Fprintf(&b, "%T\n", a)
		}
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

// TestData runs every script in testdata: validator, miner and epoch cases.
func TestData(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasSuffix(path, "schedule.txt") {
			return // TestSchedule
		}
		var (
			v      *Validator
			m      *Miner
			h      *honest
			groups []proof.Group
			epochs Epochs
		)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var acts []any
			switch d.Cmd {
			case "plan":
				c := testChain(t, d)
				var secret [32]byte
				secret[0] = 42
				samples, first, deadline, window := 3, 100, 1000, 2
				d.MaybeScanArgs(t, "samples", &samples)
				d.MaybeScanArgs(t, "first", &first)
				d.MaybeScanArgs(t, "deadline", &deadline)
				d.MaybeScanArgs(t, "window", &window)
				var err error
				v, err = NewValidator(Plan{Chain: c, Secret: secret, Commitment: sample.Commit(secret), Samples: samples,
					FirstRootBy: time.Duration(first) * time.Millisecond, Deadline: time.Duration(deadline) * time.Millisecond, Window: window})
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				h = &honest{c: c, lazy: map[int]bool{}}
				return "ok\n"
			case "start":
				acts = v.Step(Start{At: ms(t, d, "at")})
			case "root":
				var step int
				d.ScanArgs(t, "step", &step)
				if d.HasArg("lazy") {
					h.lazy[step] = true
				}
				for len(h.roots) <= step {
					h.step(t, len(h.roots))
				}
				roots := h.roots[step]
				if d.HasArg("fake") {
					roots = []commit.CV{{0xfa, 0xce}}
					h.roots[step] = roots
				}
				acts = v.Step(Root{At: ms(t, d, "at"), Step: step, Roots: roots})
			case "commit":
				roots := h.roots
				if d.HasArg("tamper") {
					roots = append([][]commit.CV{{{1}}}, roots[1:]...)
				}
				acts = v.Step(Committed{At: ms(t, d, "at"), Roots: roots})
			case "tiles":
				bad := -1
				d.MaybeScanArgs(t, "bad", &bad)
				if d.HasArg("lost") {
					acts = v.Step(Tiles{Err: errors.New("stream reset"), Unanswered: true})
					break
				}
				if d.HasArg("refused") {
					acts = v.Step(Tiles{Err: errors.New("miner could not serve tiles: pruned")})
					break
				}
				tiles, proofs := h.tiles(groups, bad)
				acts = v.Step(Tiles{Tiles: tiles, Proofs: proofs})
			case "timer":
				acts = v.Step(Timer{At: ms(t, d, "at")})
			case "closed":
				ev := Closed{Err: errors.New("peer reset")}
				if v != nil && m == nil {
					acts = v.Step(ev)
				} else {
					acts = m.Step(ev)
				}
			case "chain":
				c := testChain(t, d)
				var err error
				if m, err = NewMiner(c); err != nil {
					return "error: " + err.Error() + "\n"
				}
				m.Hold = d.HasArg("hold")
				h = &honest{c: c, lazy: map[int]bool{}}
				acts = m.Begin()
			case "done":
				var step int
				d.ScanArgs(t, "step", &step)
				acts = m.Step(StepDone{Step: step, Roots: h.step(t, step)})
			case "beacon":
				var step int
				d.ScanArgs(t, "step", &step)
				b := proof.Beacon([32]byte{42}, step)
				h.beacons = append(h.beacons, b)
				acts = m.Step(BeaconIn{Step: step, Beacon: b})
			case "result":
				r := Result{Verified: d.HasArg("verified"), Reason: "", TFLOPS: 1.5}
				d.MaybeScanArgs(t, "reason", &r.Reason)
				acts = m.Step(ResultIn{Result: r})
			case "epoch-begin":
				var e uint64
				d.ScanArgs(t, "e", &e)
				return strconv.FormatUint(epochs.Begin(e), 10) + "\n"
			case "epoch-end":
				var e uint64
				d.ScanArgs(t, "e", &e)
				epochs.End(e)
				return fmt.Sprintf("in flight %d\n", epochs.InFlight(e))
			case "epoch-close":
				var e uint64
				d.ScanArgs(t, "e", &e)
				return fmt.Sprintf("in flight %d\n", epochs.Close(e))
			case "epoch-pending":
				var e uint64
				d.ScanArgs(t, "e", &e)
				return fmt.Sprintf("pending below %d: %d\n", e, epochs.Pending(e))
			default:
				t.Fatalf("unknown command %q", d.Cmd)
			}
			// A validator's beacons feed the honest miner's next steps.
			for _, a := range acts {
				switch a := a.(type) {
				case SendBeacon:
					h.beacons = append(h.beacons, a.Beacon)
				case Fetch:
					groups = a.Groups
				}
			}
			return printActions(acts)
		})
	})
}
