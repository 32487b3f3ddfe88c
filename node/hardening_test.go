package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/store"
)

func hostWith(t *testing.T, listen ...string) error {
	t.Helper()
	key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	cfg := testConfig().Node
	cfg.Listen = listen
	h, err := newHost(key, cfg)
	if err == nil {
		h.Close()
	}
	return err
}

// TestListenBusy: an address another process (here a plain socket) or
// another pog host holds is refused, naming it, even when another
// configured address is free; libp2p alone would start on the free one.
func TestListenBusy(t *testing.T) {
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	busyTCP := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", tcp.Addr().(*net.TCPAddr).Port)
	busyQUIC := fmt.Sprintf("/ip4/127.0.0.1/udp/%d/quic-v1", udp.LocalAddr().(*net.UDPAddr).Port)
	for _, listen := range [][]string{
		{busyTCP},
		{busyQUIC},
		{"/ip4/127.0.0.1/tcp/0", busyTCP},
		{busyQUIC, "/ip4/127.0.0.1/tcp/0"},
	} {
		err := hostWith(t, listen...)
		if err == nil || !strings.Contains(err.Error(), "cannot listen") {
			t.Errorf("listen %v with a busy address: %v, want refused", listen, err)
		}
	}
	if err := hostWith(t, "/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"); err != nil {
		t.Fatalf("free addresses: %v", err)
	}
}

// TestDuplicateListenPort: a second pog host on the first one's port is
// refused (SO_REUSEPORT would let both listen).
func TestDuplicateListenPort(t *testing.T) {
	key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	cfg := testConfig().Node
	cfg.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	h, err := newHost(key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	addr := h.Network().ListenAddresses()[0].String()
	if err := hostWith(t, addr); err == nil {
		t.Fatalf("a second host listened on %s", addr)
	}
}

// TestStoreFailureStopsNode: the disk fails under a running validator (every
// write errors from some point on): Run returns the store's error instead
// of running on without evidence.
func TestStoreFailureStopsNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var broken atomic.Bool
		fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
			if broken.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
				return errorfs.ErrInjected
			}
			return nil
		}))
		st, err := store.Open("db", store.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		tn := newSimTestNet(t)
		cfg := testConfig()
		key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		recorded := make(chan struct{}, 100)
		o := Options{Config: cfg, Role: RoleValidator, Key: key, Logger: testLogger(t), Store: st,
			OnRecord: func(*store.RoundRecord) { recorded <- struct{}{} }}
		tn.onSim(&o)
		v, err := New(tn.ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan error, 1)
		go func() { ran <- v.Run(tn.ctx) }()
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		select {
		case <-recorded:
		case <-time.After(90 * time.Second):
			t.Fatal("no round recorded")
		}
		broken.Store(true)
		select {
		case err := <-ran:
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("Run: %v, want the store's I/O error", err)
			}
		case <-time.After(90 * time.Second):
			t.Fatal("the validator kept running on a failed store")
		}
	})
}
