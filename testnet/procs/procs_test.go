package procs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
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
