package miner

import (
	"context"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
)

// slowPings replaces h's ping handler with one that answers each ping
// after delay, until ctx ends: a miner pretending to be farther away
// (Hooks.Delay).
func slowPings(ctx context.Context, h host.Host, delay time.Duration) {
	h.SetStreamHandler(ping.ID, func(s network.Stream) {
		defer s.Reset()
		buf := make([]byte, ping.PingSize)
		for {
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
