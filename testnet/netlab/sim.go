package netlab

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/marcopolo/simnet"
	"github.com/quic-go/quic-go"
	"go.uber.org/fx"
)

// Sim is the simulated network of a run in virtual time (testnet.Config.Sim):
// every node is a QUIC host whose UDP socket is a simnet connection, and
// each packet arrives after the one-way latency of its two ends, inside the
// synctest bubble the caller runs Run in. Nothing in the nodes knows: they
// get a transport and an in-memory filesystem for their stores.
//
// Links have latency and no bandwidth limit: a packet arrives its two ends'
// latency after it is sent, whatever else is in flight, and never before
// one sent earlier from the same node to the same node. When it is sent is
// QUIC's choice: congestion control and pacing see every stream of the
// connection, gossip and record sync beside a round's, and Go, not the
// seed, orders the goroutines that send in one virtual instant. So a
// round's timestamps can move by a pacing interval from run to run; only
// a measurement that resolves that moves the consensus
// (docs/testnet.md, "Same seed, same result").
type Sim struct {
	base time.Duration // one-way latency between any two nodes

	mu     sync.Mutex
	closed bool
	next   int
	conns  map[string]*simnet.SimConn // by IP
	delay  map[string]time.Duration   // IP → its node's added one-way latency
	fs     map[string]vfs.FS          // store directory → its filesystem
	names  map[string]string          // IP → its node's name, for faults
	links  map[[2]string]*link        // by sender and receiver IP

	// Faults (testnet.Config.Faults): nil on the default path, which then draws
	// nothing and drops nothing.
	faults  *Faults
	start   time.Time  // the run's start: fault windows count from it
	rng     *rand.Rand // packet loss draws, seeded by the run
	dropped int        // packets the faults dropped
}

// simBase is the one-way latency of every simulated link: a LAN.
const simBase = 500 * time.Microsecond

func NewSim() *Sim {
	return &Sim{base: simBase, conns: map[string]*simnet.SimConn{}, delay: map[string]time.Duration{}, fs: map[string]vfs.FS{},
		names: map[string]string{}, links: map[[2]string]*link{}}
}

// WithFaults injects f's network faults, windows counted from start and
// losses drawn from seed.
func (s *Sim) WithFaults(f Faults, start time.Time, seed int64) {
	if f.Partition == nil && f.Loss == 0 && f.Spike == nil {
		return
	}
	s.faults, s.start = &f, start
	s.rng = rand.New(rand.NewPCG(uint64(seed), 0x5eed))
}

// RecvPacket routes a sent packet: it reaches its destination after both
// ends' latency, or never if that is gone or a fault drops it.
func (s *Sim) RecvPacket(p *simnet.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	to, from := ipOf(p.To), ipOf(p.From)
	dst := s.conns[to]
	if dst == nil || s.closed {
		return
	}
	var extra time.Duration
	if s.faults != nil {
		var drop bool
		if extra, drop = s.fault(s.names[from], s.names[to]); drop {
			s.dropped++
			return
		}
	}
	l := s.links[[2]string{from, to}]
	if l == nil {
		l = &link{to: to}
		s.links[[2]string{from, to}] = l
	}
	l.queue = append(l.queue, duePacket{p, time.Now().Add(s.base + s.delay[from] + s.delay[to] + extra)})
	if !l.draining {
		l.draining = true
		go s.drain(l)
	}
}

// link is one direction between two nodes. Its packets arrive in the
// order they were sent, as on a wire; a timer per packet delivered those
// sent in one instant in any order (at 300 miners a fifth of the gossip
// RPCs then dropped went with it; BENCHMARKS.md, "what broke first").
type link struct {
	to       string
	queue    []duePacket // s.mu
	draining bool        // a drain goroutine runs (s.mu)
}

type duePacket struct {
	p  *simnet.Packet
	at time.Time
}

// drain delivers l's packets in order, each at its time, and ends when
// l is empty; the next packet starts another.
func (s *Sim) drain(l *link) {
	for {
		s.mu.Lock()
		if len(l.queue) == 0 || s.closed {
			l.queue, l.draining = nil, false
			s.mu.Unlock()
			return
		}
		d := l.queue[0]
		l.queue[0] = duePacket{}
		l.queue = l.queue[1:]
		s.mu.Unlock()
		time.Sleep(time.Until(d.at))
		s.mu.Lock()
		dst := s.conns[l.to] // a restarted node's new socket
		s.mu.Unlock()
		if dst != nil {
			dst.RecvPacket(d.p)
		}
	}
}

// fault says what the faults do to a packet from node a to node b now:
// drop it, or add latency. Loss is drawn for every packet, so its draws
// follow the order goroutines send in: a lossy run is reproducible in
// its faults' schedule, not bit for bit.
func (s *Sim) fault(a, b string) (extra time.Duration, drop bool) {
	f, now := s.faults, time.Since(s.start)
	if p := f.Partition; p != nil && now >= p.From && now < p.To && p.Splits(a, b) {
		return 0, true
	}
	if f.Loss > 0 && s.rng.Float64() < f.Loss {
		return 0, true
	}
	if sp := f.Spike; sp != nil && now >= sp.From && now < sp.To && (a == sp.Node || b == sp.Node) {
		extra = sp.Extra
	}
	return extra, false
}

func ipOf(a net.Addr) string {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.IP.String()
	}
	return a.String()
}

// Endpoint gives node name a new address and the libp2p options that put
// its host on the simulated network, every message of it delayed by delay
// each way.
func (s *Sim) Endpoint(name string, delay time.Duration) (listen string, transport []libp2p.Option) {
	s.mu.Lock()
	ip := simnet.IntToPublicIPv4(s.next)
	s.next++
	s.delay[ip.String()], s.names[ip.String()] = delay, name
	s.mu.Unlock()
	return fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", ip), []libp2p.Option{
		libp2p.Transport(libp2pquic.NewTransport),
		s.quicReuse(ip),
		// Identify's address discovery stalls a synctest bubble
		// (go-libp2p x/simlibp2p).
		libp2p.DisableIdentifyAddressDiscovery(),
	}
}

// quicReuse makes the host's QUIC sockets simulated ones at ip, as
// go-libp2p's x/simlibp2p does over simnet's links.
func (s *Sim) quicReuse(ip net.IP) libp2p.Option {
	listen := func(_ string, a *net.UDPAddr) (net.PacketConn, error) { return s.attach(a), nil }
	return libp2p.QUICReuse(func(l fx.Lifecycle, reset quic.StatelessResetKey, token quic.TokenGeneratorKey, opts ...quicreuse.Option) (*quicreuse.ConnManager, error) {
		cm, err := quicreuse.NewConnManager(reset, token, opts...)
		if err != nil {
			return nil, err
		}
		l.Append(fx.StopHook(cm.Close)) // libp2p does not close one it was given
		return cm, nil
	}, quicreuse.OverrideListenUDP(listen),
		quicreuse.OverrideSourceIPSelector(func() (quicreuse.SourceIPSelector, error) { return fixedIP(ip), nil }))
}

// attach makes the simulated socket at a.
func (s *Sim) attach(a *net.UDPAddr) *simnet.SimConn {
	c := simnet.NewBlockingSimConn(a)
	c.SetUpPacketReceiver(s)
	s.mu.Lock()
	s.conns[a.IP.String()] = c
	s.mu.Unlock()
	return c
}

// fixedIP is a host's one source address.
type fixedIP net.IP

func (f fixedIP) PreferredSourceIPForDestination(*net.UDPAddr) (net.IP, error) { return net.IP(f), nil }

// StoreFS is the in-memory filesystem of the store in dir, made on first
// use and kept for the run, so a node restarted from its store finds it.
func (s *Sim) StoreFS(dir string) vfs.FS {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fs[dir] == nil {
		s.fs[dir] = vfs.NewMem()
	}
	return s.fs[dir]
}

// Close drops every packet from now on, so no delivery outlives the run.
func (s *Sim) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}
