package testnet

import (
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/marcopolo/simnet"
	"github.com/pog-network/pog/testnet/report"
)

// simSockets puts one socket per name on s.
func simSockets(s *simNetwork, names ...string) []*simnet.SimConn {
	var out []*simnet.SimConn
	for _, n := range names {
		listen, _ := s.endpoint(n, 0)
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
		s := newSimNetwork()
		s.withFaults(Faults{Partition: &Partition{A: []string{"a"}, B: []string{"b"}, From: 10 * time.Second, To: 20 * time.Second},
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
		s := newSimNetwork()
		s.withFaults(Faults{Loss: 1}, time.Now(), 1)
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

// TestFaultRestart crashes a validator mid-run and restarts it from its
// store, and fails a miner's store writes: the validator must resume with
// every round it had verified, the miner stop with ErrStoreFailed, and
// consensus stay identical.
func TestFaultRestart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Validators, cfg.Miners, cfg.Epochs, cfg.EpochLength = 2, 2, 2, 20*time.Second
	shortEpochs(&cfg)
	cfg.Profiles = []string{"H200", "A100"}
	cfg.Faults = Faults{Crash: &Crash{Node: "validator-2", At: 25 * time.Second, Restart: 35 * time.Second},
		Store: &StoreFault{Node: "miner-2", At: 30 * time.Second}}
	cfg.Out = t.TempDir()
	s := runSim(t, cfg)
	for _, name := range []string{"no verified round lost", "nodes stop only by injected store faults, with ErrStoreFailed",
		"identical consensus on every node", "pog audit passes on every honest validator's store"} {
		c := checkNamed(s, name)
		if c == nil || !c.OK {
			t.Errorf("%s: %+v", name, c)
			continue
		}
		t.Logf("%s: %s", name, c.Detail)
	}
	var before, after int
	for _, rd := range s.Rounds {
		if rd.Validator == "validator-2" && rd.Verified {
			switch {
			case rd.AtSeconds < 25:
				before++
			case rd.AtSeconds > 35:
				after++
			}
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("validator-2 verified %d rounds before its crash and %d after its restart; want some of both", before, after)
	}
}

func checkNamed(s *report.Summary, name string) *report.Check {
	for i := range s.Checks {
		if s.Checks[i].Name == name {
			return &s.Checks[i]
		}
	}
	return nil
}
