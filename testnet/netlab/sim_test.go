package netlab

import (
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/marcopolo/simnet"
)

// simSockets puts one socket per name on s.
func simSockets(s *Sim, names ...string) []*simnet.SimConn {
	var out []*simnet.SimConn
	for _, n := range names {
		listen, _ := s.Endpoint(n, 0)
		ip := net.ParseIP(strings.Split(listen, "/")[2])
		out = append(out, s.attach(&net.UDPAddr{IP: ip, Port: 8000}))
	}
	return out
}

// delivered sends one packet from a to b and says whether it arrived
// within a second, and after how long.
func delivered(t *testing.T, a, b *simnet.SimConn) (bool, time.Duration) {
	t.Helper()
	sent := time.Now()
	if _, err := a.WriteTo([]byte("x"), b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	b.SetReadDeadline(time.Now().Add(time.Second))
	_, _, err := b.ReadFrom(make([]byte, 8))
	return err == nil, time.Since(sent)
}

// TestSimNetFaults: a partition drops packets between its two sets only
// during its window, then heals; a spike delays one node's packets during
// its window; loss at probability 1 drops every packet.
func TestSimNetFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSim()
		s.WithFaults(Faults{Partition: &Partition{A: []string{"a"}, B: []string{"b"}, From: 10 * time.Second, To: 20 * time.Second},
			Spike: &Spike{Node: "c", Extra: 300 * time.Millisecond, From: 10 * time.Second, To: 20 * time.Second}}, time.Now(), 1)
		c := simSockets(s, "a", "b", "c")
		defer func() {
			for _, x := range c {
				x.Close()
			}
		}()
		if ok, d := delivered(t, c[0], c[1]); !ok || d != simBase {
			t.Fatalf("before the partition: delivered %v after %v", ok, d)
		}
		time.Sleep(10 * time.Second)
		if ok, _ := delivered(t, c[0], c[1]); ok {
			t.Fatal("a → b delivered during the partition")
		}
		if ok, _ := delivered(t, c[1], c[0]); ok {
			t.Fatal("b → a delivered during the partition")
		}
		if ok, d := delivered(t, c[2], c[1]); !ok || d != simBase+300*time.Millisecond {
			t.Fatalf("c → b during the spike: delivered %v after %v", ok, d)
		}
		time.Sleep(10 * time.Second)
		if ok, d := delivered(t, c[0], c[1]); !ok || d != simBase {
			t.Fatalf("after the partition healed: delivered %v after %v", ok, d)
		}
		if s.dropped != 2 {
			t.Fatalf("%d packets dropped, want 2", s.dropped)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := NewSim()
		s.WithFaults(Faults{Loss: 1}, time.Now(), 1)
		c := simSockets(s, "a", "b")
		defer c[0].Close()
		defer c[1].Close()
		for range 10 {
			if ok, _ := delivered(t, c[0], c[1]); ok {
				t.Fatal("a packet got through loss at probability 1")
			}
		}
	})
}

// TestSimLinkKeepsOrder: packets one node sends another in one instant
// arrive in the order sent, each after the link's latency.
func TestSimLinkKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSim()
		c := simSockets(s, "a", "b")
		defer c[0].Close()
		defer c[1].Close()
		const n = 200
		sent := time.Now()
		for i := range n {
			if _, err := c[0].WriteTo([]byte{byte(i)}, c[1].LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		buf := make([]byte, 8)
		for i := range n {
			c[1].SetReadDeadline(time.Now().Add(time.Second))
			if _, _, err := c[1].ReadFrom(buf); err != nil {
				t.Fatalf("packet %d: %v", i, err)
			}
			if buf[0] != byte(i) || time.Since(sent) != simBase {
				t.Fatalf("packet %d arrived as the %d-th, after %v", buf[0], i, time.Since(sent))
			}
		}
	})
}
