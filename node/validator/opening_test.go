package validator

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"
)

// TestOpeningAllowanceCoversSlowStart sends an opening of each size, once
// the reveal is in, over a fresh QUIC connection to a miner 200 ms away,
// and checks that it arrives within openingAllowance of the reveal's
// send: an honest distant miner's opening is never held past its
// allowance. Before, the allowance was one round trip and the transfer at
// fetchFloor, and a plot's 145 KB opening took three round trips (1.2 s
// against 485 ms): its host set was judged held, and whether a slot's
// window ended in the overrun decided a no-show.
func TestOpeningAllowanceCoversSlowStart(t *testing.T) {
	for _, need := range []int{4 << 10, 40 << 10, 145172, 1 << 20, 4 << 20} {
		t.Run(fmt.Sprint(need), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sim := &simnet.Simnet{LatencyFunc: simnet.StaticLatency(200 * time.Millisecond)}
				sim.Start()
				t.Cleanup(sim.Close) // after the hosts close: cleanups run last-registered first
				v, m := simHost(t, sim, 1), simHost(t, sim, 2)
				m.SetStreamHandler("/opening", func(s network.Stream) {
					defer s.Close()
					if _, err := io.ReadFull(s, make([]byte, 1)); err == nil {
						s.Write(make([]byte, need))
					}
				})
				if err := v.Connect(t.Context(), peer.AddrInfo{ID: m.ID(), Addrs: m.Addrs()}); err != nil {
					t.Fatal(err)
				}
				rtt := measureRTT(t.Context(), v, slog.New(slog.DiscardHandler), m.ID())
				s, err := v.NewStream(t.Context(), m.ID(), "/opening")
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if _, err := s.Write([]byte{1}); err != nil { // the reveal
					t.Fatal(err)
				}
				sent := time.Now()
				if _, err := io.ReadFull(s, make([]byte, need)); err != nil {
					t.Fatal(err)
				}
				took, allowed := time.Since(sent), openingAllowance(rtt, need)
				t.Logf("%d bytes, round trip %v: took %v, allowed %v", need, rtt, took, allowed)
				if took > allowed {
					t.Errorf("%d bytes took %v, past the allowance %v", need, took, allowed)
				}
			})
		})
	}
}

// simHost is a QUIC host on sim, at the i-th simulated address, on a
// 1 Gbit/s link.
func simHost(t *testing.T, sim *simnet.Simnet, i int) host.Host {
	link := simnet.LinkSettings{BitsPerSecond: 1000 * simlibp2p.OneMbps}
	h, err := libp2p.New(
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", simnet.IntToPublicIPv4(i))),
		libp2p.Transport(libp2pquic.NewTransport),
		simlibp2p.QUICSimnet(sim, simnet.NodeBiDiLinkSettings{Downlink: link, Uplink: link}),
		libp2p.DisableIdentifyAddressDiscovery(),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}
