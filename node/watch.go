package node

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
)

// watch turns what a node sees over time into operator warnings: a miner
// nobody may challenge, a bootstrap peer down for a minute, no challenge
// for three round gaps, a validator that went away. It is a pure
// state machine: the caller feeds it events and the clock.
type watch struct {
	miner          bool
	noValidators   bool // a miner that accepts challenges from nobody
	interval       time.Duration
	bootstrapGrace time.Duration
	// owned, under a slot schedule, counts the slots of this miner that
	// v owned and whose opening closed in (from, to], at most limit: a
	// validator is lost after quietRounds of them without its challenge.
	// A validator of V visits a miner once in about V slots, so a fixed
	// gap would call every one lost (680 warnings in 45 s among 16
	// validators). nil: no schedule, the round gap.
	owned func(v peer.ID, from, to time.Time, limit int) int

	begun         bool
	start         time.Time
	lastChallenge time.Time
	quiet         bool // warned of no challenge, not cleared since
	validators    map[peer.ID]*watchedValidator
	bootstrap     map[peer.ID]*watchedPeer
}

type watchedValidator struct {
	last time.Time // its last challenge to this miner
	lost string    // why it is lost; empty while it is not
}

type watchedPeer struct {
	down   time.Time // unconnected since; zero while connected
	warned bool
}

// alert is one log line the watch asks for.
type alert struct {
	level slog.Level
	msg   string
	attrs []any
}

// bootstrapGrace is how long a bootstrap peer may be unreachable before a
// warning.
const bootstrapGrace = time.Minute

// quietRounds is how many round gaps without a challenge make a miner
// warn.
const quietRounds = 3

// roundGap is the longest a validator with settings v leaves a miner
// between two challenges: a round (round_target), the random pause after
// it (at most 2·round_target·(1−u)/u for duty cycle u, SPEC §16) and one
// tick of round_interval. A miner judges by its own config's validator
// section, the network's defaults.
func roundGap(v config.ValidatorConfig) time.Duration {
	d, u := float64(v.RoundTarget.Duration), v.DutyCycle
	return v.RoundInterval.Duration + v.RoundTarget.Duration + time.Duration(2*d*(1-u)/u)
}

func newWatch(c config.Config, role Role, bootstrap []peer.ID) *watch {
	w := &watch{miner: role == RoleMiner, interval: roundGap(c.Validator), bootstrapGrace: bootstrapGrace,
		noValidators: len(c.Network.Validators) == 0 && c.Network.Genesis == "" && !c.Network.TrustAnyValidator,
		validators:   map[peer.ID]*watchedValidator{}, bootstrap: map[peer.ID]*watchedPeer{}}
	for _, p := range bootstrap {
		w.bootstrap[p] = &watchedPeer{}
	}
	return w
}

// challenged notes a challenge to this miner from validator v.
func (w *watch) challenged(v peer.ID, at time.Time) []alert {
	var out []alert
	if w.quiet {
		w.quiet = false
		out = append(out, alert{slog.LevelInfo, "challenges resumed", []any{"validator", v}})
	}
	e := w.validators[v]
	if e == nil {
		if len(w.validators) >= maxWatchedValidators {
			return out
		}
		e = &watchedValidator{}
		w.validators[v] = e
	}
	if e.lost != "" {
		out = append(out, alert{slog.LevelInfo, "validator back", []any{"validator", v}})
		e.lost = ""
	}
	e.last, w.lastChallenge = at, at
	return out
}

// maxWatchedValidators bounds the validators a miner tracks (with
// trust_any_validator, any peer may challenge).
const maxWatchedValidators = 256

// step checks the conditions at now; connected reports whether this node
// has a connection to a peer.
func (w *watch) step(now time.Time, connected func(peer.ID) bool) []alert {
	var out []alert
	if !w.begun {
		w.begun, w.start = true, now
		if w.miner && w.noValidators {
			out = append(out, alert{slog.LevelWarn, "no validators configured: no challenge will be accepted, so this miner earns nothing",
				[]any{"fix", "list the network's validator peer IDs in network.validators (or set network.genesis)"}})
		}
	}
	for p, b := range w.bootstrap {
		switch {
		case connected(p):
			if b.warned {
				out = append(out, alert{slog.LevelInfo, "bootstrap peer reachable again", []any{"peer", p}})
			}
			b.down, b.warned = time.Time{}, false
		case b.down.IsZero():
			b.down = now
		case !b.warned && now.Sub(b.down) >= w.bootstrapGrace:
			b.warned = true
			out = append(out, alert{slog.LevelWarn, "bootstrap peer unreachable", []any{"peer", p, "for", now.Sub(b.down).Round(time.Second)}})
		}
	}
	if !w.miner {
		return out
	}
	quietFor := quietRounds * w.interval
	since := w.lastChallenge
	if since.IsZero() {
		since = w.start
	}
	if !w.quiet && !w.noValidators && now.Sub(since) >= quietFor {
		w.quiet = true
		out = append(out, alert{slog.LevelWarn, "no challenge received", []any{"for", now.Sub(since).Round(time.Second),
			"round_gaps", quietRounds, "hint", "are the validators running and connected? see pog status"}})
	}
	for v, e := range w.validators {
		if e.lost != "" {
			continue
		}
		switch {
		case !connected(v):
			e.lost = "disconnected"
		case w.owned != nil:
			if w.owned(v, e.last, now, quietRounds) < quietRounds {
				continue
			}
			e.lost = fmt.Sprintf("no challenge in %d slots it owned, over %v", quietRounds, now.Sub(e.last).Round(time.Second))
		case now.Sub(e.last) >= quietFor:
			e.lost = "no challenge for " + now.Sub(e.last).Round(time.Second).String()
		default:
			continue
		}
		out = append(out, alert{slog.LevelWarn, "validator lost", []any{"validator", v, "reason", e.lost}})
	}
	return out
}

// active lists the warnings that still hold, for status displays.
func (w *watch) active() []string {
	var out []string
	if w.miner && w.noValidators {
		out = append(out, "no validators configured")
	}
	for p, b := range w.bootstrap {
		if b.warned {
			out = append(out, "bootstrap peer unreachable: "+p.String())
		}
	}
	if w.quiet {
		out = append(out, "no challenge received")
	}
	for v, e := range w.validators {
		if e.lost != "" {
			out = append(out, "validator lost: "+v.String()+" ("+e.lost+")")
		}
	}
	slices.Sort(out)
	return out
}
