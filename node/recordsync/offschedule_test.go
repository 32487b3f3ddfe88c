package recordsync

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
)

// sealedChallenge is key's signed challenge to miner, round r.
func sealedChallenge(t testing.TB, key crypto.PrivKey, miner peer.ID, r uint64) []byte {
	p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner)}
	pb1, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protocol.Seal(key, &pb.Challenge{Version: protocol.Version, Epoch: 7, Round: r, Miner: []byte(miner),
		Params: [][]byte{pb1}, SecretCommitment: make([]byte, 32), Samples: 66, DeadlineMs: 5000, Steps: 4, FirstRootMs: 500})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// offSchedulePage is a kind-5 response as a node writes it: a header, then
// each challenge as BE64 receipt ‖ envelope, each framed.
func offSchedulePage(status byte, next int, challenges ...[]byte) []byte {
	var b bytes.Buffer
	protocol.WriteFrame(&b, syncwire.EvidenceHeader(status, len(challenges), next))
	for i, c := range challenges {
		protocol.WriteFrame(&b, append(binary.BigEndian.AppendUint64(nil, uint64(1_800_000_000e9+i)), c...))
	}
	return b.Bytes()
}

// checkedScope is a memScope that records what a read holds reserved.
type checkedScope struct{ held, peak int }

func (s *checkedScope) ReserveMemory(n int, _ uint8) error {
	s.held += n
	s.peak = max(s.peak, s.held)
	return nil
}

func (s *checkedScope) ReleaseMemory(n int) { s.held -= n }

// offSchedulePageCase is a response to an off-schedule request from item
// from, and how many challenges a client accepts of it (-1: it is refused
// as a bad peer's).
type offSchedulePageCase struct {
	name string
	page []byte
	from int
	want int
}

// offSchedulePageCases are responses to miner's request, real encodings
// signed by seeded keys.
func offSchedulePageCases(t testing.TB) (peer.ID, []offSchedulePageCase) {
	_, miner := nodetest.SeededKey(t, 1)
	a, _ := nodetest.SeededKey(t, 2)
	b, _ := nodetest.SeededKey(t, 3)
	// cb is ca1's body signed by b: another challenge, of another signer.
	ca1, ca2, cb := sealedChallenge(t, a, miner, 1), sealedChallenge(t, a, miner, 2), sealedChallenge(t, b, miner, 1)
	var flood [][]byte
	for r := range uint64(store.MaxOffSchedule + 1) {
		flood = append(flood, sealedChallenge(t, a, miner, r))
	}
	return miner, []offSchedulePageCase{
		{"a page", offSchedulePage(syncwire.StatusOK, 0, ca1, ca2, cb), 0, 3},
		{"a page with more to follow", offSchedulePage(syncwire.StatusOK, 67, ca1, ca2, cb), 64, 3},
		{"none", offSchedulePage(syncwire.StatusOK, 0), 0, 0},
		{"pruned", offSchedulePage(syncwire.StatusPruned, 0), 0, -1},
		{"served twice", offSchedulePage(syncwire.StatusOK, 0, ca1, ca1), 0, -1},
		{"another miner's", offSchedulePage(syncwire.StatusOK, 0, sealedChallenge(t, a, peer.ID("x"), 1)), 0, -1},
		{"cut short", offSchedulePage(syncwire.StatusOK, 0, ca1[:len(ca1)-1]), 0, -1},
		{"a signature broken", offSchedulePage(syncwire.StatusOK, 0, append(ca2[:len(ca2)-1:len(ca2)-1], ca2[len(ca2)-1]^1)), 0, -1},
		{"over the bound of one signer", offSchedulePage(syncwire.StatusOK, 0, flood...), 0, -1},
	}
}

// TestOffSchedulePage: a client takes a page of signed challenges to
// itself, and refuses a page holding one that is not, one twice or too
// many of one signer.
func TestOffSchedulePage(t *testing.T) {
	miner, cases := offSchedulePageCases(t)
	for _, c := range cases {
		oc := newOffScheduleCheck(miner, 7)
		_, err := readEvidencePage(&checkedScope{}, bufio.NewReader(bytes.NewReader(c.page)), syncwire.KindOffSchedule, c.from, oc.take)
		switch {
		case c.want < 0 && err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.want >= 0 && (err != nil || len(oc.out) != c.want):
			t.Errorf("%s: %d accepted (%v), want %d", c.name, len(oc.out), err, c.want)
		}
	}
}

// FuzzOffSchedulePage reads any bytes as a response to an off-schedule
// request (FetchOffSchedule's page path), seeded with those of
// TestOffSchedulePage: no panic; each frame is reserved before it is
// allocated, one at a time and within the item bound, and released; what
// it accepts is at most a page of challenges that open, signed, naming the
// asking miner, no larger together than the input.
func FuzzOffSchedulePage(f *testing.F) {
	miner, cases := offSchedulePageCases(f)
	for _, c := range cases {
		f.Add(c.page, uint16(c.from))
	}
	f.Fuzz(func(t *testing.T, page []byte, from uint16) {
		c := newOffScheduleCheck(miner, 7)
		scope := &checkedScope{}
		next, err := readEvidencePage(scope, bufio.NewReader(bytes.NewReader(page)), syncwire.KindOffSchedule, int(from), c.take)
		if scope.held != 0 || scope.peak > store.MaxOffScheduleLen {
			t.Fatalf("reservations: %d bytes still held, peak %d (one item is at most %d)", scope.held, scope.peak, store.MaxOffScheduleLen)
		}
		if err != nil {
			return
		}
		if len(c.out) > syncwire.MaxItems || next != 0 && next != int(from)+len(c.out) {
			t.Fatalf("accepted %d items, next %d from %d", len(c.out), next, from)
		}
		size, per := 0, map[string]int{}
		for _, o := range c.out {
			op, err := protocol.Open(o.Envelope, pb.MessageType_CHALLENGE)
			if err != nil || string(op.Author) != string(o.Signer) || peer.ID(op.Msg.(*pb.Challenge).Miner) != miner || o.ID != protocol.ID(op.Body) {
				t.Fatalf("accepted a challenge that is not a signed one to this miner: %v", err)
			}
			if per[string(o.Signer)]++; per[string(o.Signer)] > store.MaxOffSchedule {
				t.Fatalf("accepted over %d challenges of one signer", store.MaxOffSchedule)
			}
			size += 8 + len(o.Envelope)
		}
		if size > len(page) {
			t.Fatalf("accepted %d bytes of challenges from a %d-byte response", size, len(page))
		}
	})
}
