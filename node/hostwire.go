package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/proof/host/cpuwork"
)

// HostProtocol is the direct stream of a host round (SPEC §23.8): the
// validator sends the challenge, the miner its checkpoint root, the
// validator its sampling secret, the miner the opening of the segments the
// secret samples. Each message is one length-prefixed frame.
const HostProtocol = "/pog/host/1.0.0"

// hostKindCPU is the only host round the node plays so far: cpuwork.
const hostKindCPU = 1

// hostChallenge is a host round's first frame.
type hostChallenge struct {
	Commitment [32]byte // sample.Commit of the sampling secret
	Samples    uint16   // segments the secret samples (1..host.MaxSegments)
	RootByMs   uint32   // the root is due this long after the challenge
	CPU        cpuwork.Params
}

// maxHostChallenge bounds the first frame: kind, commitment, samples,
// deadline, then the CPU params (seed, miner ID of ≤ 255 bytes, table log,
// three 64-bit shape fields).
const maxHostChallenge = 1 + 32 + 2 + 4 + 32 + 1 + 255 + 1 + 3*8

// encode is kind ‖ commitment ‖ BE16 samples ‖ BE32 root_by_ms ‖
// cpuwork.Params.Encode.
func (c *hostChallenge) encode() []byte {
	b := append([]byte{hostKindCPU}, c.Commitment[:]...)
	b = binary.BigEndian.AppendUint16(b, c.Samples)
	b = binary.BigEndian.AppendUint32(b, c.RootByMs)
	return append(b, c.CPU.Encode()...)
}

// decodeHostChallenge parses encode's output and checks every bound the
// miner relies on before it allocates the table or runs a chain.
func decodeHostChallenge(b []byte) (*hostChallenge, error) {
	if len(b) > maxHostChallenge {
		return nil, fmt.Errorf("host challenge of %d bytes: at most %d", len(b), maxHostChallenge)
	}
	const head = 1 + 32 + 2 + 4 + 32 + 1
	if len(b) < head {
		return nil, errors.New("host challenge truncated")
	}
	if b[0] != hostKindCPU {
		return nil, fmt.Errorf("host challenge of unknown kind %d", b[0])
	}
	c := &hostChallenge{Samples: binary.BigEndian.Uint16(b[33:]), RootByMs: binary.BigEndian.Uint32(b[35:])}
	copy(c.Commitment[:], b[1:33])
	copy(c.CPU.Seed[:], b[39:71])
	n := int(b[71])
	rest := b[head:]
	if len(rest) != n+1+3*8 {
		return nil, fmt.Errorf("host challenge: %d bytes after the seed for a %d-byte miner ID", len(rest), n)
	}
	c.CPU.Miner = append([]byte(nil), rest[:n]...)
	c.CPU.TableLog = rest[n]
	rest = rest[n+1:]
	c.CPU.Chains = binary.BigEndian.Uint64(rest)
	c.CPU.Steps = binary.BigEndian.Uint64(rest[8:])
	c.CPU.Segment = binary.BigEndian.Uint64(rest[16:])
	if c.Samples < 1 || int(c.Samples) > host.MaxSegments {
		return nil, fmt.Errorf("host challenge samples %d: want 1..%d", c.Samples, host.MaxSegments)
	}
	if c.RootByMs == 0 {
		return nil, errors.New("host challenge without a root deadline")
	}
	if err := c.CPU.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// maxHostOpening bounds the opening of samples segments of a tree of
// leaves checkpoints: a count, at most two states per segment, and a batch
// proof of at most one chaining value per sampled leaf per tree level.
func maxHostOpening(samples int, leaves uint64) int {
	depth := bits.Len64(leaves) + 1
	return 4 + 2*samples*cpuwork.StateBytes + 4 + 32*2*samples*depth
}
