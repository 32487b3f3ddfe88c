// Package protocol owns pog's wire format: the signed envelope every message
// travels in, per-type size bounds checked before decoding, the stateless
// validity rules of each message, topic names and stream protocol IDs, and
// stream framing. Rules that need state (who is a validator, which challenge
// is open) live in node; SPEC.md is normative for both.
package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/internal/kdf"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
	"lukechampine.com/blake3"
)

// Version is the protocol version every message carries.
const Version = 1

// Gossip topics and the proof stream protocol.
const (
	TopicAnnounce   = "/pog/1/announce"
	TopicChallenge  = "/pog/1/challenge"
	TopicCommitment = "/pog/1/commitment"
	TopicReveal     = "/pog/1/reveal"
	TopicEpoch      = "/pog/1/epoch"
	// TopicEquivocation carries equivocation proofs (equivocation.go).
	TopicEquivocation = "/pog/1/equivocation"
	ProofProtocol     = "/pog/proof/1.0.0"
	RoundProtocol     = "/pog/round/1.0.0"
)

// Bounds (SPEC.md §14).
const (
	MaxGossipBytes   = 16 << 10 // any gossiped envelope but an epoch record
	MaxEpochMiners   = 4096     // weights in one epoch record
	MaxSubChallenges = 16       // GPUs per challenge
	MaxGPUs          = 64
	MaxString        = 128
	MaxDeadlineMS    = 3_600_000
	MaxProofBytes    = 4 + 32*commit.MaxProofCVs
	MaxErrorString   = 1 << 10
)

// maxEnvelope bounds each message type's envelope.
var maxEnvelope = map[pb.MessageType]int{
	pb.MessageType_MINER_ANNOUNCE: 8 << 10,
	pb.MessageType_CHALLENGE:      8 << 10,
	pb.MessageType_COMMITMENT:     12 << 10, // proof.MaxRoundRoots roots
	pb.MessageType_REVEAL:         1 << 10,
	pb.MessageType_TILE_REQUEST:   48 << 10,
	pb.MessageType_TILE_RESPONSE:  MaxProofBytes + 4*commit.MaxIndices + 2<<10, // framing of one proof per group
	pb.MessageType_EPOCH_RECORD:   512 << 10,
	// Two epoch records and the reporter's envelope around them.
	pb.MessageType_EQUIVOCATION_PROOF: 2*(512<<10) + 4<<10,
}

// MaxEnvelope returns the size bound of a message type's envelope.
func MaxEnvelope(t pb.MessageType) int { return maxEnvelope[t] }

// Errors from Open; each is provably bad input (gossip: Reject).
var (
	ErrTooLarge     = errors.New("message exceeds its size bound")
	ErrMalformed    = errors.New("malformed message")
	ErrWrongType    = errors.New("unexpected message type")
	ErrBadSignature = errors.New("bad signature")
	ErrInvalid      = errors.New("invalid field")
)

func signedBytes(t pb.MessageType, body []byte) []byte {
	return append([]byte{'p', 'o', 'g', '/', '1', '/', 's', 'i', 'g', 0, byte(t)}, body...)
}

// Seal signs msg with key and returns the encoded envelope.
func Seal(key crypto.PrivKey, msg proto.Message) ([]byte, error) {
	t, err := typeOf(msg)
	if err != nil {
		return nil, err
	}
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	sig, err := key.Sign(signedBytes(t, body))
	if err != nil {
		return nil, err
	}
	pub, err := crypto.MarshalPublicKey(key.GetPublic())
	if err != nil {
		return nil, err
	}
	raw, err := proto.Marshal(&pb.Envelope{Type: t, Body: body, PublicKey: pub, Signature: sig})
	if err != nil {
		return nil, err
	}
	if len(raw) > maxEnvelope[t] {
		return nil, fmt.Errorf("%w: %v of %d bytes, limit %d", ErrTooLarge, t, len(raw), maxEnvelope[t])
	}
	return raw, nil
}

func typeOf(msg proto.Message) (pb.MessageType, error) {
	switch msg.(type) {
	case *pb.MinerAnnounce:
		return pb.MessageType_MINER_ANNOUNCE, nil
	case *pb.Challenge:
		return pb.MessageType_CHALLENGE, nil
	case *pb.Commitment:
		return pb.MessageType_COMMITMENT, nil
	case *pb.Reveal:
		return pb.MessageType_REVEAL, nil
	case *pb.TileRequest:
		return pb.MessageType_TILE_REQUEST, nil
	case *pb.TileResponse:
		return pb.MessageType_TILE_RESPONSE, nil
	case *pb.EpochRecord:
		return pb.MessageType_EPOCH_RECORD, nil
	case *pb.EquivocationProof:
		return pb.MessageType_EQUIVOCATION_PROOF, nil
	}
	return 0, fmt.Errorf("%w: %T", ErrWrongType, msg)
}

// Opened is a decoded, signature-checked, stateless-valid message.
type Opened struct {
	Type   pb.MessageType
	Author peer.ID
	Body   []byte // the signed bytes, for IDs and evidence
	Raw    []byte // the whole envelope
	Msg    proto.Message
}

// Open checks raw's size against want's bound, decodes the envelope, checks
// the author's signature, decodes the body and applies the type's stateless
// rules. Every error wraps one of the Err values above.
func Open(raw []byte, want pb.MessageType) (*Opened, error) {
	env, pub, err := envelope(raw, want)
	if err != nil {
		return nil, err
	}
	if ok, err := pub.Verify(signedBytes(env.Type, env.Body), env.Signature); err != nil || !ok {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, want)
	}
	return body(raw, env, pub)
}

// Decode is Open without the signature check, for evidence this node
// stored after opening it itself (scoring re-reads its own records). The
// author is still derived from the envelope's key.
func Decode(raw []byte, want pb.MessageType) (*Opened, error) {
	env, pub, err := envelope(raw, want)
	if err != nil {
		return nil, err
	}
	return body(raw, env, pub)
}

// Author is the peer ID an envelope names as its author, without checking
// its signature: for rate limits that must run before the check (a forged
// author then fails Open).
func Author(raw []byte, want pb.MessageType) (peer.ID, error) {
	_, pub, err := envelope(raw, want)
	if err != nil {
		return "", err
	}
	return peer.IDFromPublicKey(pub)
}

// envelope checks raw's size bound and type, decodes the envelope and
// parses the author's public key.
func envelope(raw []byte, want pb.MessageType) (*pb.Envelope, crypto.PubKey, error) {
	limit, ok := maxEnvelope[want]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %v", ErrWrongType, want)
	}
	if len(raw) > limit {
		return nil, nil, fmt.Errorf("%w: %v of %d bytes, limit %d", ErrTooLarge, want, len(raw), limit)
	}
	var env pb.Envelope
	if err := proto.Unmarshal(raw, &env); err != nil {
		return nil, nil, fmt.Errorf("%w: envelope: %v", ErrMalformed, err)
	}
	if env.Type != want {
		return nil, nil, fmt.Errorf("%w: got %v, want %v", ErrWrongType, env.Type, want)
	}
	pub, err := crypto.UnmarshalPublicKey(env.PublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: public key: %v", ErrMalformed, err)
	}
	return &env, pub, nil
}

// body decodes and validates an envelope's message.
func body(raw []byte, env *pb.Envelope, pub crypto.PubKey) (*Opened, error) {
	author, err := peer.IDFromPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: author: %v", ErrMalformed, err)
	}
	msg := newMessage(env.Type)
	if err := proto.Unmarshal(env.Body, msg); err != nil {
		return nil, fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	if err := Validate(msg); err != nil {
		return nil, err
	}
	return &Opened{Type: env.Type, Author: author, Body: env.Body, Raw: raw, Msg: msg}, nil
}

// PeekChallenge decodes a stored challenge envelope's body and its
// sub-challenge parameters without checking its signature or author:
// scoring reads thousands of its own, already checked, challenges per
// epoch.
func PeekChallenge(raw []byte) (*pb.Challenge, []proof.Params, error) {
	var env pb.Envelope
	if err := proto.Unmarshal(raw, &env); err != nil || env.Type != pb.MessageType_CHALLENGE {
		return nil, nil, fmt.Errorf("%w: not a challenge envelope", ErrMalformed)
	}
	var m pb.Challenge
	if err := proto.Unmarshal(env.Body, &m); err != nil {
		return nil, nil, fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	if len(m.Params) < 1 || len(m.Params) > MaxSubChallenges {
		return nil, nil, invalid("%d sub-challenges", len(m.Params))
	}
	out := make([]proof.Params, len(m.Params))
	for i, b := range m.Params {
		p, err := proof.DecodeParams(b)
		if err != nil {
			return nil, nil, invalid("sub-challenge %d: %v", i, err)
		}
		out[i] = p
	}
	return &m, out, nil
}

func newMessage(t pb.MessageType) proto.Message {
	switch t {
	case pb.MessageType_MINER_ANNOUNCE:
		return &pb.MinerAnnounce{}
	case pb.MessageType_CHALLENGE:
		return &pb.Challenge{}
	case pb.MessageType_COMMITMENT:
		return &pb.Commitment{}
	case pb.MessageType_REVEAL:
		return &pb.Reveal{}
	case pb.MessageType_TILE_REQUEST:
		return &pb.TileRequest{}
	case pb.MessageType_EPOCH_RECORD:
		return &pb.EpochRecord{}
	case pb.MessageType_EQUIVOCATION_PROOF:
		return &pb.EquivocationProof{}
	}
	return &pb.TileResponse{}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// ID identifies a message by its signed body: BLAKE3 derive-key of the body
// under a fixed context. Commitments and reveals name challenges by it.
func ID(body []byte) [32]byte {
	return idKDF.Sum(body)
}

var idKDF = kdf.New("pog 2026-11-29 message id v1")

// GossipID is a gossip message's ID (SPEC §13): the first 20 bytes of
// BLAKE3 of its data, so re-published bytes are duplicates whoever sends
// them (gossip messages carry no author or sequence number of their own).
func GossipID(data []byte) string {
	id := blake3.Sum256(data)
	return string(id[:20])
}

// Validate applies a message's stateless rules (SPEC.md §15).
func Validate(msg proto.Message) error {
	switch m := msg.(type) {
	case *pb.MinerAnnounce:
		return validateAnnounce(m)
	case *pb.Challenge:
		_, err := ChallengeParams(m)
		return err
	case *pb.Commitment:
		if err := checkHeader(m.Version, m.ChallengeId); err != nil {
			return err
		}
		if err := checkRoots(m.Roots, proof.MaxRoundRoots); err != nil {
			return err
		}
	case *pb.Reveal:
		if err := checkHeader(m.Version, m.ChallengeId); err != nil {
			return err
		}
		if len(m.Secret) != 32 {
			return invalid("secret is %d bytes", len(m.Secret))
		}
	case *pb.TileRequest:
		if err := checkHeader(m.Version, m.ChallengeId); err != nil {
			return err
		}
		if len(m.Secret) != 32 {
			return invalid("secret is %d bytes", len(m.Secret))
		}
		if len(m.Indices) < 1 || len(m.Indices) > commit.MaxIndices {
			return invalid("%d indices, want 1..%d", len(m.Indices), commit.MaxIndices)
		}
		for i := 1; i < len(m.Indices); i++ {
			if m.Indices[i] <= m.Indices[i-1] {
				return invalid("indices not strictly increasing at %d", i)
			}
		}
	case *pb.TileResponse:
		if err := checkHeader(m.Version, m.ChallengeId); err != nil {
			return err
		}
		n := 0
		for _, p := range m.Proofs {
			n += len(p)
		}
		if len(m.Proofs) > commit.MaxIndices || n > MaxProofBytes || len(m.Error) > MaxErrorString {
			return invalid("%d proofs of %d bytes or error of %d bytes too long", len(m.Proofs), n, len(m.Error))
		}
	case *pb.EpochRecord:
		return validateEpochRecord(m)
	case *pb.EquivocationProof:
		_, err := CheckEquivocation(m)
		return err
	default:
		return fmt.Errorf("%w: %T", ErrWrongType, msg)
	}
	return nil
}

func validateEpochRecord(m *pb.EpochRecord) error {
	if m.Version != Version {
		return invalid("version %d, want %d", m.Version, Version)
	}
	if len(m.RoundsRoot) != 32 || len(m.ScoringConfigHash) != 32 || len(m.PrevRecordHash) != 32 {
		return invalid("epoch record hashes must be 32 bytes")
	}
	if len(m.Weights) > MaxEpochMiners {
		return invalid("%d weights, at most %d", len(m.Weights), MaxEpochMiners)
	}
	sum := 0.0
	for i, w := range m.Weights {
		if _, err := peer.IDFromBytes(w.Miner); err != nil {
			return invalid("weight %d: miner: %v", i, err)
		}
		if i > 0 && string(w.Miner) <= string(m.Weights[i-1].Miner) {
			return invalid("weights not sorted by miner at %d", i)
		}
		if !(w.Weight >= 0 && w.Weight <= 1) {
			return invalid("weight %d is %v, want [0, 1]", i, w.Weight)
		}
		sum += w.Weight
	}
	if sum > 1+1e-9 {
		return invalid("weights sum to %v > 1", sum)
	}
	return nil
}

func checkHeader(version uint32, id []byte) error {
	if version != Version {
		return invalid("version %d, want %d", version, Version)
	}
	if len(id) != 32 {
		return invalid("challenge id is %d bytes", len(id))
	}
	return nil
}

func validateAnnounce(m *pb.MinerAnnounce) error {
	if m.Version != Version {
		return invalid("version %d, want %d", m.Version, Version)
	}
	if len(m.Gpus) > MaxGPUs {
		return invalid("%d GPUs, at most %d", len(m.Gpus), MaxGPUs)
	}
	for i, g := range m.Gpus {
		if len(g.Name) > MaxString || len(g.Uuid) > MaxString {
			return invalid("GPU %d name or UUID too long", i)
		}
	}
	if len(m.Precisions) < 1 || len(m.Precisions) > 8 {
		return invalid("%d precisions, want 1..8", len(m.Precisions))
	}
	for _, p := range m.Precisions {
		if proof.Precision(p) != proof.FP16 && proof.Precision(p) != proof.FP32 {
			return invalid("unknown precision %d", p)
		}
	}
	if len(m.Backend) > MaxString {
		return invalid("backend name too long")
	}
	if m.MaxOutputBytes < 8<<10 || m.MaxOutputBytes > proof.MaxOutputBytes {
		return invalid("capacity %d bytes outside [%d, %d]", m.MaxOutputBytes, 8<<10, uint64(proof.MaxOutputBytes))
	}
	return nil
}

// ChallengeParams validates a challenge and decodes its sub-challenges: each
// must name the challenge's miner and carry its own nonce, so one
// computation cannot answer two sub-challenges.
func ChallengeParams(m *pb.Challenge) ([]proof.Params, error) {
	if m.Version != Version {
		return nil, invalid("version %d, want %d", m.Version, Version)
	}
	miner, err := peer.IDFromBytes(m.Miner)
	if err != nil {
		return nil, invalid("miner peer ID: %v", err)
	}
	if len(m.Params) < 1 || len(m.Params) > MaxSubChallenges {
		return nil, invalid("%d sub-challenges, want 1..%d", len(m.Params), MaxSubChallenges)
	}
	if len(m.SecretCommitment) != 32 {
		return nil, invalid("secret commitment is %d bytes", len(m.SecretCommitment))
	}
	if m.Samples < 1 || m.Samples > commit.MaxIndices {
		return nil, invalid("samples %d, want 1..%d", m.Samples, commit.MaxIndices)
	}
	if m.DeadlineMs < 1 || m.DeadlineMs > MaxDeadlineMS {
		return nil, invalid("deadline %d ms, want 1..%d", m.DeadlineMs, MaxDeadlineMS)
	}
	if m.FirstRootMs < 1 || m.FirstRootMs > m.DeadlineMs {
		return nil, invalid("first root due after %d ms, want 1..%d (the deadline)", m.FirstRootMs, m.DeadlineMs)
	}
	if m.MinTimedMs > m.DeadlineMs {
		return nil, invalid("steps timed over at least %d ms, want at most %d (the deadline)", m.MinTimedMs, m.DeadlineMs)
	}
	if m.Steps < 1 || m.Steps > proof.MaxSteps || int(m.Steps)*len(m.Params) > proof.MaxRoundRoots {
		return nil, invalid("%d steps of %d sub-challenges: want 1..%d steps and at most %d roots", m.Steps, len(m.Params), proof.MaxSteps, proof.MaxRoundRoots)
	}
	out := make([]proof.Params, len(m.Params))
	nonces := map[[32]byte]bool{}
	var shape proof.Params
	for i, b := range m.Params {
		p, err := proof.DecodeParams(b)
		if err != nil {
			return nil, invalid("sub-challenge %d: %v", i, err)
		}
		if peer.ID(p.Miner) != miner {
			return nil, invalid("sub-challenge %d is for another miner", i)
		}
		if i == 0 {
			shape = p
		}
		if p.Tiles() != shape.Tiles() || p.TileBytes() != shape.TileBytes() {
			return nil, invalid("sub-challenge %d differs in shape from sub-challenge 0", i)
		}
		if nonces[p.Nonce] {
			return nil, invalid("sub-challenge %d repeats a nonce", i)
		}
		nonces[p.Nonce] = true
		out[i] = p
	}
	return out, nil
}

// WriteFrame writes b with a uvarint length prefix.
func WriteFrame(w io.Writer, b []byte) error {
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(b)))
	if _, err := w.Write(hdr[:n]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

// ReadFrame reads one length-prefixed frame of at most max bytes, checking
// the length before allocating.
func ReadFrame(r *bufio.Reader, max int) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("frame length: %w", err)
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("%w: frame of %d bytes, limit %d", ErrTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("frame body: %w", err)
	}
	return b, nil
}
