package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

func init() {
	commands["explain"] = command{"show why a miner earned its score: each part's figures, weights and rounds", runExplain}
}

func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	miner := fs.String("miner", "", "only this miner (peer ID) (default: every miner scored)")
	epoch := fs.Int64("epoch", -1, "the epoch (default: the latest with round evidence)")
	jsonOut := fs.Bool("json", false, "print JSON: every figure unrounded")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := checkMiner(stderr, "explain", *miner); code != 0 {
		return code
	}
	var e *uint64
	if *epoch >= 0 {
		v := uint64(*epoch)
		e = &v
	}
	scores, code := scoresOf(stderr, "explain", *home, nil, *miner, e)
	if code != 0 {
		return code
	}
	if *jsonOut {
		return writeJSON(stdout, scores)
	}
	printExplain(stdout, scores)
	return 0
}

// showWeights prints an epoch's weights; with a miner, only its row, then
// its score's breakdown in that epoch (read from st if it is open).
func showWeights(stdout, stderr io.Writer, out weightsOut, home string, st *store.Store, miner string, jsonOut bool) int {
	if miner != "" {
		out.Miners = slices.DeleteFunc(out.Miners, func(r weightRow) bool { return r.Miner != miner })
		var code int
		if out.Scores, code = scoresOf(stderr, "weights", home, st, miner, &out.Epoch); code != 0 {
			return code
		}
	}
	printWeights(stdout, out, jsonOut, homePeer(home))
	if !jsonOut && len(out.Scores) > 0 {
		fmt.Fprintln(stdout)
		printExplain(stdout, out.Scores)
	}
	return 0
}

// checkMiner refuses a --miner that is not a peer ID.
func checkMiner(stderr io.Writer, name, miner string) int {
	if miner == "" {
		return 0
	}
	if _, err := peer.Decode(miner); err != nil {
		fmt.Fprintf(stderr, "pog %s: --miner %q: not a peer ID: %v\n", name, miner, err)
		return 2
	}
	return 0
}

// scoresOf returns the score breakdowns of epoch e (nil: the latest with
// round evidence), only miner's if miner is set: from st if it is open,
// else from the node running on home, else from home's store.
func scoresOf(stderr io.Writer, name, home string, st *store.Store, miner string, e *uint64) ([]epoch.MinerScore, int) {
	if st == nil {
		if out, ok, code := scoresFromAPI(stderr, name, home, miner, e); ok {
			return out, code
		}
		var code int
		if st, _, code = openHome(stderr, name, home); st == nil {
			return nil, code
		}
		defer st.Close()
	}
	scores, ep, err := epoch.Explain(st, scoring.DefaultConfig(), e)
	if err != nil {
		return nil, fail(stderr, name, err)
	}
	if miner == "" {
		return scores, 0
	}
	for _, s := range scores {
		if s.Miner == miner {
			return []epoch.MinerScore{s}, 0
		}
	}
	fmt.Fprintf(stderr, "pog %s: miner %s has no score in epoch %d of this home's round evidence\n", name, miner, ep)
	return nil, 1
}

// scoresFromAPI asks the node running on home, if there is one.
func scoresFromAPI(stderr io.Writer, name, home, miner string, e *uint64) ([]epoch.MinerScore, bool, int) {
	query := ""
	if e != nil {
		query = fmt.Sprintf("?epoch=%d", *e)
	}
	if miner == "" {
		var all []epoch.MinerScore
		ok, code := fromRunningNode(stderr, name, home, "/api/v1/scores"+query, &all)
		return all, ok, code
	}
	var one epoch.MinerScore
	ok, code := fromRunningNode(stderr, name, home, "/api/v1/miners/"+url.PathEscape(miner)+"/score"+query, &one)
	return []epoch.MinerScore{one}, ok, code
}

// printExplain prints each miner's breakdown: the parts and their terms,
// each with its raw figure, reference, cap, value, weight and contribution
// (six significant digits; --json prints them exactly), then availability,
// penalty, flags and the rounds.
func printExplain(w io.Writer, scores []epoch.MinerScore) {
	for i, s := range scores {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "miner %s  epoch %d  validator %s  score %s\n", s.Miner, s.Epoch, s.Validator, fig(s.Total))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PART\tRAW\tREFERENCE\tCAP\tVALUE\tWEIGHT\tCONTRIBUTION\tHOW")
		for _, p := range s.Parts {
			printPart(tw, s, p)
		}
		total := make([]string, len(s.Parts))
		for i, p := range s.Parts {
			total[i] = fig(p.Contribution)
		}
		fmt.Fprintf(tw, "total\t\t\t\t\t\t%s\t%s\n", fig(s.Total), strings.Join(total, " + "))
		tw.Flush()
		fmt.Fprintf(w, "availability %s = %d verified ÷ (%d verified + %d missed); %d failed; penalty %s (carried %s)\n",
			fig(s.Availability), s.Verified, s.Verified, s.Missed, s.Failures, fig(s.Penalty), fig(s.CarriedPenalty))
		for _, f := range s.Flags {
			fmt.Fprintf(w, "flag: %s\n", f)
		}
		printScoredRounds(w, s.Rounds)
	}
}

// termHows say where a term's cap comes from when it is not Config.Cap.
var termHows = map[string]string{
	"ram bandwidth": "cap: the share of the reference RAM its dataset holds",
	"storage speed": "cap: the share of the reference storage its plot holds",
}

// printPart prints a part's row and its terms' (the GPU part's throughput
// followed by the classes it blends).
func printPart(tw io.Writer, s epoch.MinerScore, p scoring.Part) {
	how := fmt.Sprintf("(%s) × availability %s", added(p.Terms), fig(p.Availability))
	if p.Name == "gpu" {
		how += fmt.Sprintf(" × (1 − penalty %s)", fig(p.Penalty))
	}
	if p.Note != "" {
		how += ": " + p.Note
	}
	fmt.Fprintf(tw, "%s\t\t\t\t%s\t%s\t%s\t%s\n", p.Name, fig(p.Value), fig(p.Weight), fig(p.Contribution), how)
	for _, t := range p.Terms {
		if t.Name != "throughput" {
			printTerm(tw, "  ", t, termHows[t.Name])
			continue
		}
		how := "no scored rounds"
		if w := s.Classes[0].Weight + s.Classes[1].Weight; w > 0 {
			how = fmt.Sprintf("(%s) ÷ %s", added(s.Classes), fig(w))
		}
		printTerm(tw, "  ", t, how)
		printTerm(tw, "    ", s.Classes[0], classHow(s.SustainedWeight, s.PeakWeight, s.FP16Sustained, s.FP16Peak, s.Classes[0]))
		printTerm(tw, "    ", s.Classes[1], classHow(s.SustainedWeight, s.PeakWeight, s.FP32Sustained, s.FP32Peak, s.Classes[1]))
	}
}

func printTerm(tw io.Writer, indent string, t scoring.Term, how string) {
	raw, ref := "", ""
	if t.Reference > 0 {
		raw, ref = withUnit(t.Raw, t.Unit), withUnit(t.Reference, t.Unit)
	}
	fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent, t.Name, raw, ref, fig(t.Cap), fig(t.Value), fig(t.Weight), fig(t.Contribution), how)
}

// classHow says how a class's raw figure blends its median and best round.
func classHow(sw, pw, sustained, peak float64, t scoring.Term) string {
	if t.Weight == 0 {
		return "no scored rounds: weight 0"
	}
	return fmt.Sprintf("%s·median %s + %s·best %s", fig(sw), fig(sustained), fig(pw), fig(peak))
}

// added spells out the terms' contributions in the order they are added.
func added(ts []scoring.Term) string {
	vs := make([]string, len(ts))
	for i, t := range ts {
		vs[i] = fig(t.Contribution)
	}
	return strings.Join(vs, " + ")
}

// roundUses says what each use means for the score.
var roundUses = map[scoring.Use]string{
	scoring.UseScored:  "scored",
	scoring.UseProbe:   "probe: availability and memory, throughput not scored",
	scoring.UseUnknown: "unknown precision: availability and memory only",
	scoring.UseMissed:  "missed: lowers availability",
	scoring.UseFailed:  "failed: zeroes the GPU part",
}

func printScoredRounds(w io.Writer, rounds []epoch.ScoredRound) {
	if len(rounds) == 0 {
		fmt.Fprintln(w, "no rounds this epoch (scored for a carried penalty or host proofs)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tPRECISION\tTFLOPS\tMEMORY\tVERDICT\tCOUNTED\tREASON")
	for _, r := range rounds {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Round, r.Precision, fig(r.TFLOPS),
			withUnit(float64(r.ProvenMemoryBytes), "bytes"), r.Verdict, roundUses[r.Use], r.Reason)
	}
	tw.Flush()
}

// fig is a figure to six significant digits.
func fig(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// withUnit prints bytes as GB (decimal, as the reference is stated).
func withUnit(v float64, unit string) string {
	if unit == "bytes" {
		return fig(v/1e9) + " GB"
	}
	return fig(v) + " " + unit
}
