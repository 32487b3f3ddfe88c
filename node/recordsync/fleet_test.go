package recordsync

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// endedEarly counts the syncer's "sync pass ended early" lines: passes a
// busy peer refused.
type endedEarly struct{ n *atomic.Int64 }

func (h endedEarly) Enabled(context.Context, slog.Level) bool { return true }
func (h endedEarly) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "sync pass ended early" {
		h.n.Add(1)
	}
	return nil
}
func (h endedEarly) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h endedEarly) WithGroup(string) slog.Handler      { return h }

// A fleet of nodes started at one instant syncs every interval with the
// one validator they share, each pass fetching large records over slow
// links (the fleet stores nothing, so every pass fetches them again), so a
// response holds a serving place for a while. Their periodic passes, each
// at its node's phase, must not arrive together past the validator's
// serving places: with every pass at the same instants, most were refused
// each time, and a late joiner that shared those instants caught up by
// luck only.
func TestFleetStartedTogetherIsNotRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fleet, interval = 4 * syncMaxServing, 20 * time.Second
		sim := &simnet.Simnet{LatencyFunc: simnet.StaticLatency(5 * time.Millisecond)}
		sim.Start()
		t.Cleanup(sim.Close) // after the hosts close: cleanups run last-registered first
		rng := rand.New(rand.NewSource(7))
		var refused atomic.Int64
		server := newSimSyncPeer(t, sim, 0, rng, slog.New(slog.DiscardHandler))
		key, _, _ := crypto.GenerateEd25519Key(rng)
		v, _ := peer.IDFromPrivateKey(key)
		for i, raw := range bigRecordChain(t, key, 3, 2000) {
			if err := server.st.PutEpochRecord(uint64(i+1), []byte(v), raw); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		var clients []*syncPeerT
		for i := 0; i < fleet; i++ {
			c := newSimSyncPeer(t, sim, i+1, rng, slog.New(endedEarly{&refused}))
			c.y.deliver = func(context.Context, *protocol.Opened) {}
			c.connect(t, server)
			clients = append(clients, c)
		}
		// Each Run's first pass (on connecting) comes at once: the periodic
		// ones after it are what must spread.
		for _, c := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); c.y.Run(ctx, interval, &wg) }()
		}
		time.Sleep(interval)
		synctest.Wait()
		refused.Store(0)
		time.Sleep(3 * interval)
		synctest.Wait()
		if n := refused.Load(); n > 0 {
			t.Errorf("%d of %d nodes' periodic passes over three intervals were refused", n, 3*len(clients))
		}
	})
}

// bigRecordChain is recordChain for epochs 1..n, each record weighing
// miners miners.
func bigRecordChain(t *testing.T, key crypto.PrivKey, n, miners int) [][]byte {
	t.Helper()
	weights := map[peer.ID]float64{}
	for m := range miners {
		// An identity multihash of an Ed25519 key.
		id := append([]byte{0x00, 0x24, 0x08, 0x01, 0x12, 0x20}, make([]byte, 32)...)
		binary.BigEndian.PutUint32(id[6:], uint32(m))
		weights[peer.ID(id)] = 1 / float64(miners)
	}
	var out [][]byte
	var prev [32]byte
	for e := 1; e <= n; e++ {
		raw, id, err := recordtest.EpochRecord(key, uint64(e), prev, weights)
		if err != nil {
			t.Fatal(err)
		}
		prev = id
		out = append(out, raw)
	}
	return out
}

// newSimSyncPeer is newSyncPeer on sim, at host index i, its key from rng.
func newSimSyncPeer(t *testing.T, sim *simnet.Simnet, i int, rng *rand.Rand, log *slog.Logger) *syncPeerT {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rng)
	if err != nil {
		t.Fatal(err)
	}
	link := simnet.NodeBiDiLinkSettings{
		Downlink: simnet.LinkSettings{BitsPerSecond: 10 * simlibp2p.OneMbps},
		Uplink:   simnet.LinkSettings{BitsPerSecond: 10 * simlibp2p.OneMbps},
	}
	h, err := libp2p.New(libp2p.Identity(key),
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", simnet.IntToPublicIPv4(i))),
		libp2p.Transport(libp2pquic.NewTransport), simlibp2p.QUICSimnet(sim, link),
		libp2p.DisableIdentifyAddressDiscovery())
	if err != nil {
		t.Fatal(err)
	}
	return syncPeerOn(t, h, 3, log)
}
