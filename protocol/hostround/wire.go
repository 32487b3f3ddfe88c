package hostround

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host"
)

// Protocol is the direct stream of a host round (SPEC §23.8): the
// validator sends the challenge, the miner its checkpoint root, the
// validator its sampling secret, the miner the opening of the segments the
// secret samples. Each message is one length-prefixed frame.
const Protocol = "/pog/host/1.0.0"

// Challenge is a host round's first frame.
type Challenge struct {
	Commitment [32]byte // sample.Commit of the sampling secret
	Samples    uint16   // segments the secret samples (1..host.MaxSegments)
	RootByMs   uint32   // the root is due this long after the challenge
	Proof      Proof
}

// challengeHead is the kind, commitment, samples and deadline.
const challengeHead = 1 + 32 + 2 + 4

// MaxChallenge bounds the first frame: the head, then the largest
// parameters (RAM: epoch seed, cache log, rounds, seed, miner ID of ≤ 255
// bytes, four 64-bit fields; a plot audit is as long).
const MaxChallenge = challengeHead + 32 + 1 + 4 + 32 + 1 + 255 + 4*8

// Encode is kind ‖ commitment ‖ BE16 samples ‖ BE32 root_by_ms ‖ the
// proof's canonical encoding.
func (c *Challenge) Encode() []byte {
	b := append([]byte{c.Proof.Kind()}, c.Commitment[:]...)
	b = binary.BigEndian.AppendUint16(b, c.Samples)
	b = binary.BigEndian.AppendUint32(b, c.RootByMs)
	return append(b, c.Proof.Encode()...)
}

// DecodeChallenge parses Encode's output and checks every bound the
// miner relies on before it allocates a table or runs a walk.
func DecodeChallenge(b []byte) (*Challenge, error) {
	if len(b) > MaxChallenge {
		return nil, fmt.Errorf("host challenge of %d bytes: at most %d", len(b), MaxChallenge)
	}
	if len(b) < challengeHead {
		return nil, errors.New("host challenge truncated")
	}
	c := &Challenge{Samples: binary.BigEndian.Uint16(b[33:]), RootByMs: binary.BigEndian.Uint32(b[35:])}
	copy(c.Commitment[:], b[1:33])
	if c.Samples < 1 || int(c.Samples) > host.MaxSegments {
		return nil, fmt.Errorf("host challenge samples %d: want 1..%d", c.Samples, host.MaxSegments)
	}
	if c.RootByMs == 0 {
		return nil, errors.New("host challenge without a root deadline")
	}
	p, err := DecodeProof(b[0], b[challengeHead:])
	if err != nil {
		return nil, err
	}
	c.Proof = p
	return c, nil
}

// RootFrame is the miner's second message: the checkpoint root, and for a
// windowed round the steps a chain it proved (root ‖ BE64 steps).
func RootFrame(root commit.CV, windowed bool, steps uint64) []byte {
	if !windowed {
		return root[:]
	}
	return binary.BigEndian.AppendUint64(append([]byte{}, root[:]...), steps)
}

// RootFrameLen is RootFrame's length.
func RootFrameLen(windowed bool) int {
	if windowed {
		return len(commit.CV{}) + 8
	}
	return len(commit.CV{})
}

// DecodeRootFrame parses RootFrame's output.
func DecodeRootFrame(b []byte, windowed bool) (commit.CV, uint64, error) {
	if len(b) != RootFrameLen(windowed) {
		return commit.CV{}, 0, fmt.Errorf("root of %d bytes: want %d", len(b), RootFrameLen(windowed))
	}
	var steps uint64
	if windowed {
		steps = binary.BigEndian.Uint64(b[len(commit.CV{}):])
	}
	return commit.CV(b[:len(commit.CV{})]), steps, nil
}

// Segments is the sample secret draws for the challenge and root (SPEC
// §23.1), at most the proof's MaxSample.
func (c *Challenge) Segments(secret [32]byte, root commit.CV) []uint64 {
	k := int(c.Samples)
	if ms := c.Proof.MaxSample(); ms > 0 {
		k = min(k, ms)
	}
	return host.Sample(secret, root, c.Proof.Encode(), c.Proof.Dims(), k)
}
