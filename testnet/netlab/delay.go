package netlab

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// A delay proxy stands in for netem, which the CI kernel lacks: a loopback
// TCP listener that forwards each connection to one target and holds every
// chunk it reads for a fixed delay before writing it on, in each direction.
// It is a delay line, not a rate limit: a chunk read at t leaves at t+d.
const (
	delayChunk = 32 << 10 // bytes read at a time
	// delayQueue chunks may wait per direction; then the reader stops and
	// TCP flow control pushes back on the sender. With the chunk being read
	// and the one being written it bounds memory to (delayQueue+2) chunks
	// per direction (2.1 MiB), and bandwidth to about delayQueue·delayChunk/d
	// (10 MiB/s at 200 ms): like a TCP window.
	delayQueue = 64
)

// DelayProxy forwards connections accepted on a loopback port to target,
// each direction delayed by d.
type DelayProxy struct {
	ln     net.Listener
	target string
	d      time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup

	queued    atomic.Int64 // bytes read and not yet written, all directions
	maxQueued atomic.Int64 // the most ever queued (tests check the bound)
}

func NewDelayProxy(target string, d time.Duration) (*DelayProxy, error) {
	if d <= 0 {
		return nil, fmt.Errorf("delay proxy: delay %v must be positive", d)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &DelayProxy{ln: ln, target: target, d: d, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address, host:port.
func (p *DelayProxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, cuts every connection and waits until every
// goroutine of the proxy has returned. Queued data is dropped.
func (p *DelayProxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
		p.ln.Close()
		for c := range p.conns {
			c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// track registers c so Close can cut it; false once the proxy is closed.
func (p *DelayProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *DelayProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *DelayProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(in) {
			in.Close()
			return
		}
		p.wg.Add(1)
		go p.serve(in)
	}
}

// serve dials the target for one accepted connection and pipes both ways.
func (p *DelayProxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer p.untrack(in)
	out, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return
	}
	if !p.track(out) {
		out.Close()
		return
	}
	defer p.untrack(out)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(out, in) }()
	go func() { defer wg.Done(); p.pipe(in, out) }()
	wg.Wait()
}

type delayed struct {
	b  []byte
	at time.Time // when it was read
}

// pipe copies src to dst through the delay line. When src ends, dst's
// write side is closed once the queue has drained; on any error both
// connections are cut, which ends the other direction too.
func (p *DelayProxy) pipe(dst, src net.Conn) {
	q := make(chan delayed, delayQueue)
	go func() {
		defer close(q)
		for {
			b := make([]byte, delayChunk)
			n, err := src.Read(b)
			if n > 0 {
				p.note(int64(n))
				select {
				case q <- delayed{b[:n], time.Now()}:
				case <-p.done:
					p.note(-int64(n))
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		for c := range q { // unblock the reader and account for what is dropped
			p.note(-int64(len(c.b)))
		}
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for c := range q {
		if wait := time.Until(c.at.Add(p.d)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-p.done:
				p.note(-int64(len(c.b)))
				return
			}
		}
		_, err := dst.Write(c.b)
		p.note(-int64(len(c.b)))
		if err != nil {
			src.Close()
			dst.Close()
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

func (p *DelayProxy) note(n int64) {
	v := p.queued.Add(n)
	for {
		m := p.maxQueued.Load()
		if v <= m || p.maxQueued.CompareAndSwap(m, v) {
			return
		}
	}
}

// DelayedDialer rewrites a node's bootstrap peers so that it reaches each
// through its own delay proxy; Close stops them all.
type DelayedDialer struct {
	proxies []*DelayProxy
}

// Rewrite returns addrs (multiaddrs ending in /p2p/<id>) pointing at new
// proxies that forward to the originals with delay d each way.
func (dd *DelayedDialer) Rewrite(addrs []string, d time.Duration) ([]string, error) {
	var out []string
	for _, a := range addrs {
		m, err := ma.NewMultiaddr(a)
		if err != nil {
			return nil, err
		}
		transport, id := ma.SplitLast(m)
		if id == nil || id.Protocol().Code != ma.P_P2P {
			return nil, fmt.Errorf("delay: %s does not end in /p2p/<id>", a)
		}
		target, err := manet.ToNetAddr(transport)
		if err != nil {
			return nil, fmt.Errorf("delay: %s: %w", a, err)
		}
		if target.Network() != "tcp" {
			return nil, fmt.Errorf("delay: %s is not TCP", a)
		}
		p, err := NewDelayProxy(target.String(), d)
		if err != nil {
			return nil, err
		}
		dd.proxies = append(dd.proxies, p)
		pm, err := manet.FromNetAddr(p.ln.Addr())
		if err != nil {
			return nil, err
		}
		out = append(out, pm.Encapsulate(id).String())
	}
	return out, nil
}

func (dd *DelayedDialer) Close() {
	for _, p := range dd.proxies {
		p.Close()
	}
}
