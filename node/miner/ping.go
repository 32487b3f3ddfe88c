package miner

import (
	"context"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

// slowPings replaces h's ping handler with one that answers a stream's
// first ping after first and each later one after later, until ctx ends: a
// miner pretending to be farther away (Hooks.Delay, PongDelay) or
// stalling its pings (HoldLaterPongs).
func slowPings(ctx context.Context, h host.Host, first, later time.Duration) {
	h.SetStreamHandler(ping.ID, func(s network.Stream) {
		defer s.Reset()
		buf := make([]byte, ping.PingSize)
		for delay := first; ; delay = later {
			if _, err := io.ReadFull(s, buf); err != nil {
				return
			}
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return
			}
			if _, err := s.Write(buf); err != nil {
				return
			}
		}
	})
}
