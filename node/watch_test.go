package node

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
)

// watchStep is one moment of a watch script: at t, with these peers
// connected, after these validators' challenges, the watch must log
// exactly want (message and first attribute value, "; "-separated).
type watchStep struct {
	t          time.Duration
	challenges []string
	connected  []string
	want       string
}

func runWatch(t *testing.T, w *watch, ids map[string]peer.ID, steps []watchStep) {
	t.Helper()
	t0 := time.Unix(1_800_000_000, 0)
	for _, s := range steps {
		var got []string
		note := func(as []alert) {
			for _, a := range as {
				line := a.level.String() + " " + a.msg
				if len(a.attrs) >= 2 {
					v := fmt.Sprint(a.attrs[1])
					for name, id := range ids {
						v = strings.ReplaceAll(v, id.String(), name)
					}
					line += " " + v
				}
				got = append(got, line)
			}
		}
		for _, c := range s.challenges {
			note(w.challenged(ids[c], t0.Add(s.t)))
		}
		conn := map[peer.ID]bool{}
		for _, c := range s.connected {
			conn[ids[c]] = true
		}
		note(w.step(t0.Add(s.t), func(p peer.ID) bool { return conn[p] }))
		if g := strings.Join(got, "; "); g != s.want {
			t.Fatalf("at %v: logged %q, want %q", s.t, g, s.want)
		}
	}
}

func testIDs(t *testing.T, names ...string) map[string]peer.ID {
	ids := map[string]peer.ID{}
	for _, n := range names {
		_, id := newTestKey(t)
		ids[n] = id
	}
	return ids
}

func TestWatchNoValidatorsConfigured(t *testing.T) {
	c := config.DefaultConfig()
	w := newWatch(c, RoleMiner, nil)
	runWatch(t, w, nil, []watchStep{
		{t: 0, want: "WARN no validators configured: no challenge will be accepted, so this miner earns nothing " +
			"list the network's validator peer IDs in network.validators (or set network.genesis)"},
		// Said once; and no "no challenge" warning on top of it.
		{t: time.Hour, want: ""},
	})
	if a := w.active(); len(a) != 1 || a[0] != "no validators configured" {
		t.Fatalf("active: %v", a)
	}
	// A validator does not need validators configured; a miner with
	// trust_any_validator or a list does not warn.
	for _, tc := range []struct {
		role Role
		edit func(*config.Config)
	}{
		{RoleValidator, func(*config.Config) {}},
		{RoleMiner, func(c *config.Config) { c.Network.TrustAnyValidator = true }},
		{RoleMiner, func(c *config.Config) { c.Network.Genesis = "genesis.toml" }},
	} {
		c := config.DefaultConfig()
		tc.edit(&c)
		runWatch(t, newWatch(c, tc.role, nil), nil, []watchStep{{t: 0, want: ""}})
	}
}

func TestWatchBootstrapUnreachable(t *testing.T) {
	ids := testIDs(t, "B")
	c := config.LocalConfig()
	w := newWatch(c, RoleValidator, []peer.ID{ids["B"]})
	runWatch(t, w, ids, []watchStep{
		{t: 0, want: ""},
		{t: 59 * time.Second, want: ""},
		{t: 60 * time.Second, want: "WARN bootstrap peer unreachable B"},
		{t: 90 * time.Second, want: ""}, // once
		{t: 91 * time.Second, connected: []string{"B"}, want: "INFO bootstrap peer reachable again B"},
		// Down again: another full minute before the next warning.
		{t: 92 * time.Second, want: ""},
		{t: 151 * time.Second, want: ""},
		{t: 152 * time.Second, want: "WARN bootstrap peer unreachable B"},
	})
	if a := w.active(); len(a) != 1 || !strings.HasPrefix(a[0], "bootstrap peer unreachable") {
		t.Fatalf("active: %v", a)
	}
	// Connected at start: never a warning.
	runWatch(t, newWatch(c, RoleMiner, []peer.ID{ids["B"]}), ids, []watchStep{
		{t: 0, connected: []string{"B"}, want: ""},
		{t: 5 * time.Minute, connected: []string{"B"}, challenges: []string{"B"}, want: ""},
	})
}

func TestWatchNoChallengeAndValidatorLost(t *testing.T) {
	ids := testIDs(t, "V1", "V2")
	c := config.LocalConfig()
	// A round gap of 0.5 s interval + 0.5 s round + at most 1 s pause:
	// quiet after 6 s.
	c.Validator.RoundInterval, c.Validator.RoundTarget, c.Validator.DutyCycle = config.Duration{Duration: 500 * time.Millisecond}, config.Duration{Duration: 500 * time.Millisecond}, 0.5
	w := newWatch(c, RoleMiner, nil)
	both := []string{"V1", "V2"}
	runWatch(t, w, ids, []watchStep{
		{t: 0, connected: both, want: ""},
		{t: 5 * time.Second, connected: both, want: ""},
		{t: 6 * time.Second, connected: both, want: "WARN no challenge received 6s"},
		{t: 7 * time.Second, connected: both, challenges: []string{"V1"}, want: "INFO challenges resumed V1"},
		{t: 8 * time.Second, connected: both, challenges: []string{"V2"}, want: ""},
		{t: 10 * time.Second, connected: both, challenges: []string{"V1", "V2"}, want: ""},
		// V2 disconnects: lost at once.
		{t: 11 * time.Second, connected: []string{"V1"}, want: "WARN validator lost V2"},
		{t: 12 * time.Second, connected: []string{"V1"}, challenges: []string{"V1"}, want: ""},
		// V1 stays connected but stops challenging: lost after 3 intervals,
		// and then nobody challenges.
		{t: 17 * time.Second, connected: []string{"V1"}, want: ""},
		{t: 18 * time.Second, connected: []string{"V1"}, want: "WARN no challenge received 6s; WARN validator lost V1"},
		{t: 30 * time.Second, connected: []string{"V1"}, want: ""},
		{t: 31 * time.Second, connected: both, challenges: []string{"V2"}, want: "INFO challenges resumed V2; INFO validator back V2"},
	})
	if a := w.active(); len(a) != 1 || !strings.HasPrefix(a[0], "validator lost: "+ids["V1"].String()+" (no challenge for") {
		t.Fatalf("active: %v", a)
	}
}

func TestWatchBoundsValidators(t *testing.T) {
	w := newWatch(config.LocalConfig(), RoleMiner, nil)
	at := time.Unix(1_800_000_000, 0)
	for i := 0; i < maxWatchedValidators+10; i++ {
		_, id := newTestKey(t)
		w.challenged(id, at)
	}
	if len(w.validators) != maxWatchedValidators {
		t.Fatalf("%d validators tracked, want the bound %d", len(w.validators), maxWatchedValidators)
	}
}

func newTestKey(t *testing.T) (crypto.PrivKey, peer.ID) {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(k)
	return k, id
}

// TestWatchLostBySchedule: under a slot schedule a validator is lost only
// after three slots it owned pass without its challenge, however long its
// turns are apart (here V1 owns a slot every 2 s, V2 every 10 s); a
// validator challenging in its slots never is.
func TestWatchLostBySchedule(t *testing.T) {
	ids := testIDs(t, "V1", "V2")
	every := map[peer.ID]time.Duration{ids["V1"]: 2 * time.Second, ids["V2"]: 10 * time.Second}
	t0 := time.Unix(1_800_000_000, 0)
	w := newWatch(config.LocalConfig(), RoleMiner, nil)
	w.owned = func(v peer.ID, from, to time.Time, limit int) int {
		n := 0
		for at := t0; !at.After(to) && n < limit; at = at.Add(every[v]) {
			if at.After(from) {
				n++
			}
		}
		return n
	}
	both := []string{"V1", "V2"}
	runWatch(t, w, ids, []watchStep{
		{t: 0, connected: both, challenges: both, want: ""},
		{t: 2 * time.Second, connected: both, challenges: []string{"V1"}, want: ""},
		{t: 4 * time.Second, connected: both, challenges: []string{"V1"}, want: ""},
		// V1 stops: its slots at 6 and 8 s pass, then 10 s.
		{t: 9 * time.Second, connected: both, want: ""},
		{t: 10 * time.Second, connected: both, challenges: []string{"V2"}, want: "WARN validator lost V1"},
		// V2's slots at 20 and 30 s pass: 20 s without it is no loss
		// (without any challenge, the miner is quiet).
		{t: 30 * time.Second, connected: both, want: "WARN no challenge received 20s"},
		{t: 40 * time.Second, connected: both, challenges: []string{"V1"}, want: "INFO challenges resumed V1; INFO validator back V1; WARN validator lost V2"},
	})
}
