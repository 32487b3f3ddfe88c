package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pog-network/pog/node/api"
)

func init() {
	commands["status"] = command{"summarise a running node: peers, validators, rounds, weight (via its API)", runStatus}
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	addr := fs.String("api", "", "the node's API address host:port (instead of --home)")
	tokenFile := fs.String("token-file", "", "bearer token file for --api")
	watch := fs.Bool("watch", false, "refresh until interrupted")
	every := fs.Duration("interval", 2*time.Second, "refresh interval with --watch")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var c *apiClient
	switch {
	case (*home == "") == (*addr == ""):
		fmt.Fprintln(stderr, "pog status: give --home or --api")
		return 2
	case *addr != "":
		token := ""
		if *tokenFile != "" {
			var err error
			if token, err = api.ReadToken(*tokenFile); err != nil {
				fmt.Fprintf(stderr, "pog status: %v\n", err)
				return 1
			}
		}
		c = newAPIClient(*addr, token)
	default:
		var err error
		if c, err = runningAPI(*home); err != nil {
			fmt.Fprintf(stderr, "pog status: no node API recorded in %s (%v): is a node running there with node.api or --api set?\n", *home, err)
			return 1
		}
	}
	if *every <= 0 {
		fmt.Fprintln(stderr, "pog status: --interval must be positive")
		return 2
	}
	if !*watch {
		return showStatus(c, stdout, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		fmt.Fprint(stdout, "\033[H\033[2J") // home and clear, as watch(1) does
		showStatus(c, stdout, stderr)
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
	}
}

func showStatus(c *apiClient, stdout, stderr io.Writer) int {
	var st api.Status
	if err := c.get("/api/v1/status", &st); err != nil {
		fmt.Fprintf(stderr, "pog status: %v\n", err)
		return 1
	}
	writeStatus(stdout, st)
	if st.Role == "miner" {
		// A miner keeps no round evidence: its rounds are the results its
		// validators sent, which only the running node holds.
		var own api.OwnRounds
		if err := c.get("/api/v1/own/rounds", &own); err != nil {
			fmt.Fprintf(stderr, "pog status: %v\n", err)
			return 1
		}
		writeOwnRounds(stdout, own.Rounds)
	}
	return 0
}

// ownRoundsShown is how many of a miner's latest rounds pog status lists.
const ownRoundsShown = 10

// writeOwnRounds prints a miner's latest rounds, newest first (rs is in
// the order they ended).
func writeOwnRounds(w io.Writer, rs []api.PlayedRound) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "rounds     none yet")
		return
	}
	fmt.Fprintln(w, "\nyour last rounds, as your validators reported them:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EPOCH\tROUND\tVALIDATOR\tVERDICT\tTFLOPS\tREASON")
	for i := len(rs) - 1; i >= max(0, len(rs)-ownRoundsShown); i-- {
		r := rs[i]
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.3e\t%s\n", r.Epoch, r.Round, shortPeer(r.Validator), r.Verdict, r.TFLOPS, r.Reason)
	}
	tw.Flush()
}

// writeStatus prints the human summary of a node's status.
func writeStatus(w io.Writer, st api.Status) {
	fmt.Fprintf(w, "%s %s  version %s, up %s\n", st.Role, st.PeerID, st.Version, time.Duration(st.UptimeS*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "epoch      %d, ends in %s\n", st.Epoch, time.Until(st.EpochEnd).Round(time.Second))
	if st.Own != nil {
		fmt.Fprintf(w, "weight     %.6f  incentive %.6f  (epoch %d, %d validators)\n", st.Own.Weight, st.Own.Incentive, st.Own.Epoch, st.Own.Validators)
	} else if st.Role == "miner" {
		fmt.Fprintln(w, "weight     none yet (no epoch record since start)")
	}
	if st.Role == "miner" {
		fmt.Fprintf(w, "queue      %d challenges waiting\n", st.QueueLength)
	}
	nv := 0
	for _, p := range st.Peers {
		if p.Validator {
			nv++
		}
	}
	fmt.Fprintf(w, "peers      %d connected (%d validators)\n", len(st.Peers), nv)
	for _, v := range st.Validators {
		state := "connected"
		if !v.Connected {
			state = "not connected"
		}
		fmt.Fprintf(w, "validator  %s  last heard %s ago, %s\n", v.ID, time.Since(v.LastSeen).Round(time.Second), state)
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "WARNING    %s\n", warn)
	}
	if len(st.Challenges) > 0 {
		fmt.Fprintln(w, "\nlast challenges received:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EPOCH\tROUND\tVALIDATOR\tAGO")
		for _, c := range st.Challenges {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", c.Epoch, c.Round, shortPeer(c.Validator), time.Since(c.Received).Round(time.Second))
		}
		tw.Flush()
	}
	if len(st.LastRounds) == 0 {
		if st.Role == "validator" {
			fmt.Fprintln(w, "rounds     none yet")
		}
		return
	}
	fmt.Fprintln(w, "\nlast rounds:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EPOCH\tROUND\tMINER\tVERDICT\tTFLOPS\tCOMMIT ms\tREASON")
	for _, r := range st.LastRounds {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.3e\t%.1f\t%s\n", r.Epoch, r.Round, shortPeer(r.Miner), r.Verdict, r.TFLOPS, r.CommitMS, r.Reason)
	}
	tw.Flush()
}

func shortPeer(id string) string {
	if len(id) > 12 {
		return "…" + id[len(id)-10:]
	}
	return strings.TrimSpace(id)
}
