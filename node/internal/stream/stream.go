// Package stream holds the libp2p stream plumbing both roles share: how a
// stream opens and ends, the round stream's serialised writer and frame
// reader, and framed writes. The frames themselves are protocol's.
package stream

import (
	"bufio"
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
)

// Deadline bounds how long a miner spends serving one request.
const Deadline = 30 * time.Second

// OpenTimeout bounds opening a stream: the dial and, where the peer's
// protocols are not known yet, the protocol negotiation. libp2p bounds
// negotiation (at 10 s) only for a context without a deadline, and a
// round's context runs to its epoch's cutoff: a peer that never answers
// would hold the round, and the validator's epoch record behind it, there.
const OpenTimeout = 10 * time.Second

// Open opens a stream to p for proto within OpenTimeout.
func Open(ctx context.Context, h host.Host, p peer.ID, proto libp2pprotocol.ID) (network.Stream, error) {
	octx, cancel := context.WithTimeout(ctx, OpenTimeout)
	defer cancel()
	return h.NewStream(octx, p, proto)
}

// Round is one side of a /pog/round stream; writes are serialised.
type Round struct {
	S  network.Stream
	mu sync.Mutex
	W  *bufio.Writer
}

// NewRound wraps s, buffering its writes.
func NewRound(s network.Stream) *Round { return &Round{S: s, W: bufio.NewWriter(s)} }

// Send writes and flushes one round frame.
func (r *Round) Send(f *pb.RoundFrame) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return protocol.WriteRoundFrame(r.W, f)
}

// Arrival is a frame read from a round stream and when it arrived, on the
// reader's monotonic clock.
type Arrival struct {
	F   *pb.RoundFrame
	At  time.Time
	Err error
}

// ReadFrames delivers r's frames until an error (then the error) or done.
func ReadFrames(r *bufio.Reader, done <-chan struct{}) <-chan Arrival {
	ch := make(chan Arrival, 8)
	go func() {
		for {
			f, err := protocol.ReadRoundFrame(r)
			select {
			case ch <- Arrival{f, time.Now(), err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// End ends a stream: Close when the exchange is done, else Reset
// (deferred). A Reset after Close is no no-op on QUIC: it cancels the
// stream and discards what Close had yet to deliver, such as a host
// round's opening or a round's result.
type End struct {
	S      network.Stream
	closed bool
}

// Close half-closes then closes the stream; a later Reset does nothing.
func (e *End) Close() {
	e.closed = true
	e.S.CloseWrite()
	e.S.Close()
}

// Reset resets the stream unless Close ended it.
func (e *End) Reset() {
	if !e.closed {
		e.S.Reset()
	}
}

// WriteFlush writes b as one length-prefixed frame and flushes w.
func WriteFlush(w *bufio.Writer, b []byte) error {
	if err := protocol.WriteFrame(w, b); err != nil {
		return err
	}
	return w.Flush()
}
