package netlab

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	ma "github.com/multiformats/go-multiaddr"
)

// echoServer echoes every connection until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// minRTT is the least of a few one-byte round trips over c.
func minRTT(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	best := time.Hour
	b := []byte{0}
	for range 5 {
		start := time.Now()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

func TestDelayProxyAddsRTT(t *testing.T) {
	const d = 50 * time.Millisecond
	target := echoServer(t)
	p, err := NewDelayProxy(target, d)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	direct, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	via, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer via.Close()
	base, delayed := minRTT(t, direct), minRTT(t, via)
	added := delayed - base
	t.Logf("RTT direct %v, through the proxy %v: +%v", base, delayed, added)
	// Each way holds every byte for d: at least 2d more, by construction.
	// The upper bound only rules out a stuck delay line; load can add a lot.
	if delayed < 2*d || added > 2*d+250*time.Millisecond {
		t.Fatalf("added RTT %v, want 2×%v (+ scheduling)", added, d)
	}
	// Bulk data arrives intact and in order.
	msg := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 kB: several chunks
	go via.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(via, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("bulk echo through the proxy corrupted (err %v)", err)
	}
}

// TestDelayProxyBoundedAndStops fills the delay line towards a peer that
// never reads: what the proxy holds stays within its queue, and Close cuts
// everything and returns without waiting out the delay.
func TestDelayProxyBoundedAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c // never read
		}
	}()
	p, err := NewDelayProxy(ln.Addr().String(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sink := <-accepted
	defer sink.Close()
	// 64 MiB: far beyond the queue and the kernel's socket buffers, so the
	// writer blocks once the proxy stops reading.
	c.SetWriteDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 1<<20)
	written := 0
	for written < 64<<20 {
		n, err := c.Write(buf)
		written += n
		if err != nil {
			break
		}
	}
	const bound = (delayQueue + 2) * delayChunk // the queue, the chunk being read and the one being written
	if got := p.maxQueued.Load(); got == 0 || got > bound {
		t.Fatalf("proxy held at most %d bytes, want 1..%d (wrote %d)", got, bound, written)
	}
	if written >= 64<<20 {
		t.Fatal("the proxy never pushed back on the writer")
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return: a goroutine is still waiting out the delay")
	}
	if q := p.queued.Load(); q != 0 {
		t.Fatalf("%d bytes still counted as queued after Close", q)
	}
	sink.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, sink); err != nil {
		t.Fatalf("the target's side was not closed: %v", err)
	}
}

// TestDelayedHostPing connects two libp2p hosts the way the testnet
// connects a delayed miner: the dialer listens on nothing and reaches the
// other through a delay proxy. libp2p ping must see the added round trip.
func TestDelayedHostPing(t *testing.T) {
	const d = 40 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := libp2p.New(libp2p.NoListenAddrs)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dd := &DelayedDialer{}
	defer dd.Close()
	addr := a.Addrs()[0].Encapsulate(ma.StringCast("/p2p/" + a.ID().String())).String()
	via, err := dd.Rewrite([]string{addr}, d)
	if err != nil {
		t.Fatal(err)
	}
	info, err := peer.AddrInfoFromString(via[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Connect(ctx, *info); err != nil {
		t.Fatal(err)
	}
	res := <-ping.Ping(ctx, b, a.ID())
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	if res.RTT < 2*d {
		t.Fatalf("ping RTT %v through a %v delay, want ≥ %v", res.RTT, d, 2*d)
	}
	// a reaches b only over the proxied connection: it has no address to
	// dial b directly.
	if addrs := a.Peerstore().Addrs(b.ID()); len(addrs) != 0 {
		t.Fatalf("a learned direct addresses of the host behind the proxy: %v", addrs)
	}
	for _, c := range a.Network().ConnsToPeer(b.ID()) {
		if want := dd.proxies[0].Addr(); !sameHost(c.RemoteMultiaddr(), want) {
			t.Fatalf("a's connection to b comes from %v, not through the proxy %s", c.RemoteMultiaddr(), want)
		}
	}
	gone := make(chan struct{}, 1)
	a.Network().Notify(&network.NotifyBundle{DisconnectedF: func(_ network.Network, c network.Conn) {
		if c.RemotePeer() == b.ID() {
			select {
			case gone <- struct{}{}:
			default:
			}
		}
	}})
	dd.Close() // cuts the only path
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("connection survived closing its proxy")
	}
}

// sameHost says whether m (the proxy's outbound side) is on the proxy's
// IP: the proxy dials from 127.0.0.1 with an ephemeral port.
func sameHost(m ma.Multiaddr, proxy string) bool {
	h, _, err := net.SplitHostPort(proxy)
	if err != nil {
		return false
	}
	ip, err := m.ValueForProtocol(ma.P_IP4)
	return err == nil && ip == h
}

func TestDelayedDialerRejects(t *testing.T) {
	dd := &DelayedDialer{}
	defer dd.Close()
	for _, a := range []string{
		"/ip4/127.0.0.1/tcp/4001", // no peer ID
		"/ip4/127.0.0.1/udp/4001/quic-v1/p2p/12D3KooWGRUVh4d9k5bm9cLAhfy1uQbMjyF5JwqrCuxbuDgwwHbh", // not TCP
		"not a multiaddr",
	} {
		if _, err := dd.Rewrite([]string{a}, time.Millisecond); err == nil {
			t.Errorf("rewrite(%q) accepted", a)
		}
	}
	if len(dd.proxies) != 0 {
		t.Fatalf("%d proxies started for rejected addresses", len(dd.proxies))
	}
	if _, err := NewDelayProxy("127.0.0.1:1", 0); err == nil {
		t.Fatal("zero delay accepted")
	}
}
