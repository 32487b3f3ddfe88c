package procs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

type recorder struct {
	rounds   []Round
	received map[[32]byte]peer.ID
	epochs   [][3]any
	scores   []map[peer.ID]float64
}

func (r *recorder) RoundEvent(e Round)                           { r.rounds = append(r.rounds, e) }
func (r *recorder) Received(id [32]byte, n peer.ID, _ time.Time) { r.received[id] = n }
func (r *recorder) EpochRecord(e uint64, n, v peer.ID)           { r.epochs = append(r.epochs, [3]any{e, n, v}) }
func (r *recorder) Scores(s map[peer.ID]float64)                 { r.scores = append(r.scores, s) }

// TestEventsReachTheSink: what a child's emitter writes, the parent's
// reading delivers to its sink unchanged.
func TestEventsReachTheSink(t *testing.T) {
	var buf bytes.Buffer
	em := NewEmitter(&buf)
	n, v := peer.ID("node-id"), peer.ID("validator-id")
	rec := &store.RoundRecord{Epoch: 3, Round: 7, Miner: []byte(n), Verdict: store.VerdictVerified, TFLOPS: 1.5, SentUnixNano: 42}
	em.Round("validator-1", rec)
	em.EpochRecord(3, n, v)
	p, err := peer.Decode("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA")
	if err != nil {
		t.Fatal(err)
	}
	em.Scores(map[peer.ID]float64{p: -12})
	ch := &protocol.Opened{Author: v, Body: []byte("a challenge"), Msg: &pb.Challenge{}}
	em.Gossip(v, protocol.TopicChallenge, ch, time.Unix(1, 0)) // its author's own: not a receipt
	em.Gossip(n, protocol.TopicChallenge, ch, time.Unix(2, 0))

	got := &recorder{received: map[[32]byte]peer.ID{}}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		ev.deliver(got)
	}
	if want := []Round{RoundOf("validator-1", rec)}; !reflect.DeepEqual(got.rounds, want) {
		t.Errorf("rounds %+v, want %+v", got.rounds, want)
	}
	if want := [][3]any{{uint64(3), n, v}}; !reflect.DeepEqual(got.epochs, want) {
		t.Errorf("epoch records %v, want %v", got.epochs, want)
	}
	if want := map[[32]byte]peer.ID{protocol.ID(ch.Body): n}; !reflect.DeepEqual(got.received, want) {
		t.Errorf("challenge receipts %v, want %v", got.received, want)
	}
	if len(got.scores) != 1 || got.scores[0][p] != -12 {
		t.Errorf("scores %v, want %v: -12", got.scores, p)
	}
}

// TestSpecRoundTrip: a spec the parent writes, the child reads back.
func TestSpecRoundTrip(t *testing.T) {
	want := Spec{Out: "out", Scale: 1e-6, EpochLength: 20 * time.Second, Validators: 2, Adversaries: []string{"sybil"},
		Members: []Member{{Name: "sybil-a", Role: "miner", Profile: "RTX4090", Sybil: true, Delay: time.Millisecond}}}
	path := filepath.Join(t.TempDir(), "child.json")
	if err := WriteSpec(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

// startScript runs a shell script as a child, in place of pog
// testnet-node, and waits for it to exit, at most 20 s.
func startScript(t *testing.T, script string, stop func(*Child)) *Child {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "child.sh")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Start(exe, filepath.Join(dir, "child-0.json"), "", Spec{}, &recorder{received: map[[32]byte]peer.ID{}})
	if err != nil {
		t.Fatal(err)
	}
	if stop != nil {
		stop(c)
	}
	select {
	case <-c.Exited():
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		t.Fatal("the child did not exit")
	}
	return c
}

func isReady(c *Child) bool {
	select {
	case <-c.Ready():
		return true
	default:
		return false
	}
}

// A child that exits before it is asked to stop fails, with its exit
// status and the end of its log; one stopped when asked does not.
func TestChildExit(t *testing.T) {
	c := startScript(t, `echo '{"k":"ready"}'; echo "pog testnet-node: store: disk full" >&2; exit 3`, nil)
	if err := c.Err(); !isReady(c) || err == nil || !strings.Contains(err.Error(), "exited before it was asked to stop (exit status 3)") ||
		!strings.Contains(err.Error(), "store: disk full") {
		t.Errorf("ready %v, err %v", isReady(c), err)
	}
	c = startScript(t, `echo '{"k":"ready"}'; exec sleep 60`, func(c *Child) {
		<-c.Ready()
		c.Terminate()
	})
	if err := c.Err(); err != nil {
		t.Errorf("stopped when asked: %v", err)
	}
	c = startScript(t, `trap '' TERM; echo '{"k":"ready"}'; exec sleep 60`, func(c *Child) {
		<-c.Ready()
		c.Terminate()
		c.Wait(100 * time.Millisecond)
	})
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "after it was asked to stop; killed") {
		t.Errorf("ignoring SIGTERM: %v", err)
	}
}

// An event the parent cannot read fails the child, and the parent reads
// on past an over-long line, so the child never blocks on its output.
func TestChildUnreadableEvents(t *testing.T) {
	c := startScript(t, `echo 'not json'; echo '{"k":"ready"}'; exec sleep 60`, func(c *Child) {
		<-c.Ready()
		c.Terminate()
	})
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), `unreadable event "not json"`) {
		t.Errorf("a malformed line: %v", err)
	}
	// Blocked on its output, it would never reach its exit.
	c = startScript(t, `head -c 3000000 /dev/zero | tr '\0' a; echo; echo '{"k":"ready"}'; exit 0`, nil)
	if err := c.Err(); isReady(c) || err == nil || !strings.Contains(err.Error(), "reading its events: bufio.Scanner: token too long") {
		t.Errorf("an over-long line: ready %v, %v", isReady(c), err)
	}
}
