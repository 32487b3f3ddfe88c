package protocol

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

func newKey(t testing.TB) (crypto.PrivKey, peer.ID) {
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(k)
	return k, id
}

func challengeFor(t testing.TB, miner peer.ID, subs int) *pb.Challenge {
	c := &pb.Challenge{Version: Version, Epoch: 3, Round: 9, Miner: []byte(miner),
		SecretCommitment: make([]byte, 32), Samples: 66, DeadlineMs: 5000, Steps: 4, FirstRootMs: 500}
	for i := 0; i < subs; i++ {
		p := proof.Params{Precision: proof.FP16, Batch: 1, M: 64, K: 64, N: 64, Tile: 16, Miner: []byte(miner)}
		p.Nonce[0] = byte(i)
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		c.Params = append(c.Params, b)
	}
	return c
}

func validMessages(t testing.TB, miner peer.ID) map[pb.MessageType]proto.Message {
	id := make([]byte, 32)
	return map[pb.MessageType]proto.Message{
		pb.MessageType_MINER_ANNOUNCE: &pb.MinerAnnounce{Version: Version, Seq: 1, Precisions: []uint32{1, 2}, Backend: "cpu",
			MaxOutputBytes: 1 << 30, Gpus: []*pb.GPU{{Name: "H200", Uuid: "GPU-1", MemoryBytes: 141 << 30}}},
		pb.MessageType_CHALLENGE:     challengeFor(t, miner, 2),
		pb.MessageType_COMMITMENT:    &pb.Commitment{Version: Version, ChallengeId: id, Roots: [][]byte{make([]byte, 32)}},
		pb.MessageType_REVEAL:        &pb.Reveal{Version: Version, ChallengeId: id, Secret: make([]byte, 32)},
		pb.MessageType_TILE_REQUEST:  &pb.TileRequest{Version: Version, ChallengeId: id, Secret: make([]byte, 32), Indices: []uint64{1, 5}},
		pb.MessageType_TILE_RESPONSE: &pb.TileResponse{Version: Version, ChallengeId: id, Proofs: [][]byte{{0, 0, 0, 0}}},
	}
}

func TestSealOpen(t *testing.T) {
	key, author := newKey(t)
	for typ, msg := range validMessages(t, author) {
		raw, err := Seal(key, msg)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		o, err := Open(raw, typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if o.Author != author || !proto.Equal(o.Msg, msg) {
			t.Fatalf("%v: round trip differs", typ)
		}
		// Opening as another type fails.
		other := pb.MessageType_REVEAL
		if typ == other {
			other = pb.MessageType_COMMITMENT
		}
		if _, err := Open(raw, other); !errors.Is(err, ErrWrongType) {
			t.Fatalf("%v opened as %v: %v", typ, other, err)
		}
	}
}

// Author names the envelope's signer without checking the signature (a
// forged author is left to Open), and refuses what is not an envelope of
// the type.
func TestAuthor(t *testing.T) {
	key, author := newKey(t)
	raw, _ := Seal(key, validMessages(t, author)[pb.MessageType_MINER_ANNOUNCE])
	if a, err := Author(raw, pb.MessageType_MINER_ANNOUNCE); err != nil || a != author {
		t.Fatalf("Author = %v, %v; want %v", a, err, author)
	}
	var env pb.Envelope
	proto.Unmarshal(raw, &env)
	env.Signature[0] ^= 1
	forged, _ := proto.Marshal(&env)
	if a, err := Author(forged, pb.MessageType_MINER_ANNOUNCE); err != nil || a != author {
		t.Fatalf("Author of a bad signature = %v, %v; want %v unchecked", a, err, author)
	}
	if _, err := Open(forged, pb.MessageType_MINER_ANNOUNCE); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("Open of a bad signature: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("not an envelope \xff"), make([]byte, MaxGossipBytes+1)} {
		if _, err := Author(bad, pb.MessageType_MINER_ANNOUNCE); err == nil {
			t.Errorf("Author accepted %d bytes of junk", len(bad))
		}
	}
	if _, err := Author(raw, pb.MessageType_REVEAL); !errors.Is(err, ErrWrongType) {
		t.Errorf("Author as the wrong type: %v", err)
	}
}

// Every single-bit change to an envelope is rejected (or, for bits that
// protobuf ignores, yields the same signed content).
func TestOpenRejectsBitFlips(t *testing.T) {
	key, author := newKey(t)
	raw, _ := Seal(key, validMessages(t, author)[pb.MessageType_CHALLENGE])
	want, _ := Open(raw, pb.MessageType_CHALLENGE)
	for bit := 0; bit < 8*len(raw); bit++ {
		b := bytes.Clone(raw)
		b[bit/8] ^= 1 << (bit % 8)
		o, err := Open(b, pb.MessageType_CHALLENGE)
		if err == nil && (o.Author != author || !bytes.Equal(o.Body, want.Body)) {
			t.Fatalf("bit %d: altered message accepted", bit)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	key, author := newKey(t)
	other, _ := newKey(t)
	good, _ := Seal(key, validMessages(t, author)[pb.MessageType_REVEAL])
	var env pb.Envelope
	proto.Unmarshal(good, &env)
	forged := proto.Clone(&env).(*pb.Envelope)
	forged.PublicKey, _ = crypto.MarshalPublicKey(other.GetPublic()) // claims another author
	forgedRaw, _ := proto.Marshal(forged)
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"garbage", []byte("not a protobuf at all \xff\xff"), ErrMalformed},
		{"empty", nil, ErrWrongType},
		{"oversized", make([]byte, MaxEnvelope(pb.MessageType_REVEAL)+1), ErrTooLarge},
		{"wrong author", forgedRaw, ErrBadSignature},
	}
	for _, tt := range tests {
		if _, err := Open(tt.raw, pb.MessageType_REVEAL); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	_, miner := newKey(t)
	_, stranger := newKey(t)
	tests := []struct {
		name string
		msg  proto.Message
	}{
		{"announce version", &pb.MinerAnnounce{Version: 2, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20}},
		{"announce precision", &pb.MinerAnnounce{Version: 1, Precisions: []uint32{9}, MaxOutputBytes: 1 << 20}},
		{"announce capacity", &pb.MinerAnnounce{Version: 1, Precisions: []uint32{1}, MaxOutputBytes: 1}},
		{"announce long name", &pb.MinerAnnounce{Version: 1, Precisions: []uint32{1}, MaxOutputBytes: 1 << 20,
			Gpus: []*pb.GPU{{Name: strings.Repeat("x", MaxString+1)}}}},
		{"challenge no params", func() proto.Message { c := challengeFor(t, miner, 1); c.Params = nil; return c }()},
		{"challenge bad params", func() proto.Message { c := challengeFor(t, miner, 1); c.Params[0] = []byte{1, 2}; return c }()},
		{"challenge other miner", func() proto.Message { c := challengeFor(t, miner, 1); c.Miner = []byte(stranger); return c }()},
		{"challenge repeated nonce", func() proto.Message {
			c := challengeFor(t, miner, 2)
			c.Params[1] = c.Params[0]
			return c
		}()},
		{"challenge samples", func() proto.Message { c := challengeFor(t, miner, 1); c.Samples = 0; return c }()},
		{"challenge deadline", func() proto.Message { c := challengeFor(t, miner, 1); c.DeadlineMs = MaxDeadlineMS + 1; return c }()},
		{"challenge commitment", func() proto.Message { c := challengeFor(t, miner, 1); c.SecretCommitment = nil; return c }()},
		{"commitment root", &pb.Commitment{Version: 1, ChallengeId: make([]byte, 32), Roots: [][]byte{{1}}}},
		{"commitment no roots", &pb.Commitment{Version: 1, ChallengeId: make([]byte, 32)}},
		{"reveal id", &pb.Reveal{Version: 1, ChallengeId: make([]byte, 31), Secret: make([]byte, 32)}},
		{"request unsorted", &pb.TileRequest{Version: 1, ChallengeId: make([]byte, 32), Secret: make([]byte, 32), Indices: []uint64{5, 5}}},
		{"challenge no steps", func() proto.Message { c := challengeFor(t, miner, 1); c.Steps = 0; return c }()},
		{"challenge too many roots", func() proto.Message { c := challengeFor(t, miner, 2); c.Steps = proof.MaxRoundRoots; return c }()},
		{"challenge first root after deadline", func() proto.Message { c := challengeFor(t, miner, 1); c.FirstRootMs = c.DeadlineMs + 1; return c }()},
		{"challenge timed past its deadline", func() proto.Message { c := challengeFor(t, miner, 1); c.MinTimedMs = c.DeadlineMs + 1; return c }()},
		{"challenge mixed shapes", func() proto.Message {
			c := challengeFor(t, miner, 2)
			p := proof.Params{Precision: proof.FP16, Batch: 1, M: 32, K: 64, N: 64, Tile: 16, Miner: []byte(miner)}
			c.Params[1], _ = p.MarshalBinary()
			return c
		}()},
		{"commitment too many roots", &pb.Commitment{Version: 1, ChallengeId: make([]byte, 32), Roots: make([][]byte, proof.MaxRoundRoots+1)}},
	}
	for _, tt := range tests {
		if err := Validate(tt.msg); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tt.name, err)
		}
	}
}

func TestPeekChallenge(t *testing.T) {
	key, author := newKey(t)
	c := challengeFor(t, author, 3)
	c.Probe = true
	raw, _ := Seal(key, c)
	m, ps, err := PeekChallenge(raw)
	if err != nil || len(ps) != 3 || ps[2].Nonce[0] != 2 || !m.Probe || m.Samples != c.Samples {
		t.Fatalf("peek: %v %v %v", m, ps, err)
	}
	reveal, _ := Seal(key, &pb.Reveal{Version: 1, ChallengeId: make([]byte, 32), Secret: make([]byte, 32)})
	for _, bad := range [][]byte{nil, []byte("junk"), reveal} {
		if _, _, err := PeekChallenge(bad); err == nil {
			t.Errorf("peeked params from %q", bad)
		}
	}
}

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	WriteFrame(&buf, []byte("hello"))
	WriteFrame(&buf, make([]byte, 100))
	r := bufio.NewReader(&buf)
	if b, err := ReadFrame(r, 10); err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadFrame(r, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized frame: %v", err)
	}
	if _, err := ReadFrame(bufio.NewReader(bytes.NewReader([]byte{5, 1, 2})), 10); err == nil {
		t.Fatal("truncated frame accepted")
	}
}

func FuzzOpen(f *testing.F) {
	key, author := newKey(f)
	for typ, msg := range validMessages(f, author) {
		raw, _ := Seal(key, msg)
		f.Add(raw, uint8(typ))
	}
	f.Fuzz(func(t *testing.T, raw []byte, typ uint8) {
		o, err := Open(raw, pb.MessageType(typ%8))
		if err != nil {
			return
		}
		if err := Validate(o.Msg); err != nil {
			t.Fatalf("opened message fails validation: %v", err)
		}
	})
}

func TestRoundFrames(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	good := []*pb.RoundFrame{
		{Msg: &pb.RoundFrame_Root{Root: &pb.StepRoot{Step: 3, Roots: [][]byte{make([]byte, 32)}}}},
		{Msg: &pb.RoundFrame_Beacon{Beacon: &pb.Beacon{Step: 1, Beacon: make([]byte, 32)}}},
		{Msg: &pb.RoundFrame_Result{Result: &pb.RoundResult{Verified: true, Tflops: 2}}},
	}
	bad := []*pb.RoundFrame{
		{},
		{Msg: &pb.RoundFrame_Root{Root: &pb.StepRoot{Step: proof.MaxSteps, Roots: [][]byte{make([]byte, 32)}}}},
		{Msg: &pb.RoundFrame_Root{Root: &pb.StepRoot{Step: 0, Roots: [][]byte{{1}}}}},
		{Msg: &pb.RoundFrame_Beacon{Beacon: &pb.Beacon{Step: 1, Beacon: make([]byte, 31)}}},
		{Msg: &pb.RoundFrame_Result{Result: &pb.RoundResult{Reason: strings.Repeat("x", MaxErrorString+1)}}},
		{Msg: &pb.RoundFrame_Commitment{Commitment: make([]byte, MaxEnvelope(pb.MessageType_COMMITMENT)+1)}},
	}
	for _, f := range append(good, bad...) {
		if err := WriteRoundFrame(w, f); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for i := range good {
		if f, err := ReadRoundFrame(r); err != nil || !proto.Equal(f, good[i]) {
			t.Errorf("frame %d: %v", i, err)
		}
	}
	for i := range bad {
		if _, err := ReadRoundFrame(r); err == nil {
			t.Errorf("bad frame %d accepted", i)
		}
	}
	if _, err := ReadRoundFrame(bufio.NewReader(bytes.NewReader([]byte{0x80, 0x80, 0x04}))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized frame: %v", err)
	}
}
