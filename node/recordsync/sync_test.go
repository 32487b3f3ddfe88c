package recordsync

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// syncPeerT is a bare libp2p host on 127.0.0.1 with its own store and syncer.
type syncPeerT struct {
	h  host.Host
	st *store.Store
	y  *Syncer
}

func newSyncPeer(t testing.TB, latest uint64) *syncPeerT {
	t.Helper()
	key, _, _ := crypto.GenerateEd25519Key(nil)
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	return syncPeerOn(t, h, latest, slog.New(slog.DiscardHandler))
}

// syncPeerOn gives host h a store in memory and a syncer serving it, which
// stores each record delivered (a conflict is refused).
func syncPeerOn(t testing.TB, h host.Host, latest uint64, log *slog.Logger) *syncPeerT {
	t.Helper()
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	y := New(h, st, log, func(peer.ID) bool { return true }, func() uint64 { return latest }, nil)
	y.deliver = func(_ context.Context, o *protocol.Opened) {
		st.PutEpochRecord(o.Msg.(*pb.EpochRecord).Epoch, []byte(o.Author), o.Raw)
	}
	t.Cleanup(func() { h.Close(); y.Close(); st.Close() })
	h.SetStreamHandler(syncwire.SyncProtocol, y.Serve)
	return &syncPeerT{h, st, y}
}

func (p *syncPeerT) connect(t testing.TB, q *syncPeerT) {
	t.Helper()
	if err := p.h.Connect(context.Background(), peer.AddrInfo{ID: q.h.ID(), Addrs: q.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// recordChain signs a chain of epoch records of one validator for epochs.
func recordChain(t testing.TB, key crypto.PrivKey, epochs []uint64) [][]byte {
	t.Helper()
	var out [][]byte
	prev := make([]byte, 32)
	for _, e := range epochs {
		raw, err := protocol.Seal(key, &pb.EpochRecord{Version: protocol.Version, Epoch: e, RoundsRoot: make([]byte, 32),
			ScoringConfigHash: make([]byte, 32), PrevRecordHash: prev})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
		id := protocol.ID(o.Body)
		prev = id[:]
		out = append(out, raw)
	}
	return out
}

func heldEpochs(t *testing.T, st *store.Store, v peer.ID) []uint64 {
	t.Helper()
	var es []uint64
	for ent, err := range st.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			t.Fatal(err)
		}
		if peer.ID(ent.Validator) == v {
			es = append(es, ent.Epoch)
		}
	}
	return es
}

// A node holding a validator's chain with holes (the first records, one in
// the middle, the latest) and nothing of a second validator fetches exactly
// what it lacks from a peer, each chain linked by hash; a second pass fetches
// nothing. The chain is long enough to need several responses.
func TestSyncFillsGaps(t *testing.T) {
	server, client := newSyncPeer(t, 1000), newSyncPeer(t, 1000)
	client.connect(t, server)
	var epochs1, epochs2 []uint64
	for e := uint64(3); e < 3+2*syncwire.MaxRecords+5; e++ {
		epochs1 = append(epochs1, e)
	}
	for e := uint64(10); e < 1000; e += 100 { // sparse: an often-offline validator
		epochs2 = append(epochs2, e)
	}
	k1, _, _ := crypto.GenerateEd25519Key(nil)
	k2, _, _ := crypto.GenerateEd25519Key(nil)
	v1, _ := peer.IDFromPrivateKey(k1)
	v2, _ := peer.IDFromPrivateKey(k2)
	chain1, chain2 := recordChain(t, k1, epochs1), recordChain(t, k2, epochs2)
	for i, raw := range chain1 {
		if err := server.st.PutEpochRecord(epochs1[i], []byte(v1), raw); err != nil {
			t.Fatal(err)
		}
		if i >= 4 && i != 12 && i != len(chain1)-1 {
			if err := client.st.PutEpochRecord(epochs1[i], []byte(v1), raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, raw := range chain2 {
		if err := server.st.PutEpochRecord(epochs2[i], []byte(v2), raw); err != nil {
			t.Fatal(err)
		}
	}
	var notified []uint64
	deliver := client.y.deliver
	client.y.deliver = func(ctx context.Context, o *protocol.Opened) {
		notified = append(notified, o.Msg.(*pb.EpochRecord).Epoch)
		deliver(ctx, o)
	}
	n, err := client.y.SyncPeer(context.Background(), server.h.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want := 6 + len(epochs2); n != want || len(notified) != want {
		t.Fatalf("stored %d records (%d notified), want %d", n, len(notified), want)
	}
	if got := heldEpochs(t, client.st, v1); !slices.Equal(got, epochs1) {
		t.Fatalf("v1 epochs held %v, want %v", got, epochs1)
	}
	if got := heldEpochs(t, client.st, v2); !slices.Equal(got, epochs2) {
		t.Fatalf("v2 epochs held %v, want %v", got, epochs2)
	}
	checkChained(t, client.st)
	if n, err := client.y.SyncPeer(context.Background(), server.h.ID()); n != 0 || err != nil {
		t.Fatalf("second pass stored %d: %v", n, err)
	}
}

// A record that does not link into the chain is not stored, even validly
// signed by the validator (an equivocation's other branch): the walk stops
// there without charging the peer, who may hold it in good faith.
func TestSyncStoresOnlyChainedRecords(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	honest := recordChain(t, k, []uint64{1, 2, 3})
	// The other branch's record for epoch 2: another rounds root.
	forkRaw, _ := protocol.Seal(k, &pb.EpochRecord{Version: protocol.Version, Epoch: 2, RoundsRoot: []byte("01234567890123456789012345678901"),
		ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)})
	server.st.PutEpochRecord(3, []byte(v), honest[2])
	server.st.PutEpochRecord(2, []byte(v), forkRaw)
	server.st.PutEpochRecord(1, []byte(v), honest[0])
	n, err := client.y.SyncPeer(context.Background(), server.h.ID())
	if err != nil || n != 1 {
		t.Fatalf("stored %d, %v; want only the head", n, err)
	}
	if got := heldEpochs(t, client.st, v); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("held %v", got)
	}
	if client.y.charges[server.h.ID()] != 0 {
		t.Fatal("peer charged for a validator's fork")
	}
}

// hostileServer answers every sync request on h with respond's bytes.
func hostileServer(h host.Host, respond func(req []byte) [][]byte) {
	h.SetStreamHandler(syncwire.SyncProtocol, func(s network.Stream) {
		defer s.Close()
		req, err := protocol.ReadFrame(bufio.NewReader(s), syncwire.MaxRequest)
		if err != nil {
			s.Reset()
			return
		}
		for _, f := range respond(req) {
			protocol.WriteFrame(s, f)
		}
	})
}

// Provably bad responses are refused, nothing of them is stored, and the
// serving peer is charged; after syncMaxCharges it is disconnected and not
// asked again.
func TestSyncChargesBadPeers(t *testing.T) {
	vk, _, _ := crypto.GenerateEd25519Key(nil)
	other, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(vk)
	good := recordChain(t, vk, []uint64{5})
	forged := recordChain(t, other, []uint64{5})
	future := recordChain(t, vk, []uint64{500})
	var vid [32]byte
	o, _ := protocol.Open(good[0], pb.MessageType_EPOCH_RECORD)
	vid = protocol.ID(o.Body)
	headsFrame := syncwire.EncodeHeads([]syncwire.Head{{Validator: v, Epoch: 5, ID: vid}})
	hdr := func(n uint32, next uint64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(nil, n), next)
	}
	corrupt := append([]byte{}, good[0]...)
	corrupt[len(corrupt)-1] ^= 1
	cases := []struct {
		name    string
		records [][]byte
	}{
		{"signed by another key", [][]byte{hdr(1, 0), forged[0]}},
		{"bad signature", [][]byte{hdr(1, 0), corrupt}},
		{"epoch not begun", [][]byte{hdr(1, 0), future[0]}},
		{"header claims too many", [][]byte{hdr(syncwire.MaxRecords+1, 0)}},
		{"next above before", [][]byte{hdr(0, 7)}},
		{"oversized header", [][]byte{make([]byte, 13)}},
		{"oversized record", [][]byte{hdr(1, 0), make([]byte, store.MaxEpochRecordLen+1)}},
		{"malformed heads", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
			hostileServer(server.h, func(req []byte) [][]byte {
				if req[0] == syncwire.ReqHeads {
					if c.records == nil {
						return [][]byte{{0, 0, 0, 1, 9}}
					}
					return [][]byte{headsFrame}
				}
				return c.records
			})
			client.connect(t, server)
			_, err := client.y.SyncPeer(context.Background(), server.h.ID())
			if !errors.Is(err, ErrBadPeer) {
				t.Fatalf("sync: %v, want a bad-peer error", err)
			}
			if got := heldEpochs(t, client.st, v); len(got) != 0 {
				t.Fatalf("stored %v from a bad response", got)
			}
			for range syncMaxCharges {
				client.y.syncWith(context.Background(), server.h.ID())
			}
			if client.y.charges[server.h.ID()] != syncMaxCharges {
				t.Fatalf("charged %d times", client.y.charges[server.h.ID()])
			}
			if tag := client.h.ConnManager().GetTagInfo(server.h.ID()); tag != nil && tag.Tags["pog-sync"] >= 0 {
				t.Fatalf("connection manager tag %v", tag.Tags)
			}
			if client.h.Network().Connectedness(server.h.ID()) == network.Connected {
				t.Fatal("still connected after the last charge")
			}
			client.connect(t, server)
			client.y.syncWith(context.Background(), server.h.ID())
			if client.y.charges[server.h.ID()] != syncMaxCharges {
				t.Fatal("a banned peer was asked again")
			}
		})
	}
}

// BenchmarkSyncCatchUp measures a node with no records catching up on 3
// validators × 1000 epochs from one peer on 127.0.0.1 (BENCHMARKS.md).
func BenchmarkSyncCatchUp(b *testing.B) {
	const validators, epochs = 3, 1000
	server := newSyncPeer(b, epochs)
	es := make([]uint64, epochs)
	for i := range es {
		es[i] = uint64(i + 1)
	}
	for range validators {
		k, _, _ := crypto.GenerateEd25519Key(nil)
		v, _ := peer.IDFromPrivateKey(k)
		for i, raw := range recordChain(b, k, es) {
			if err := server.st.PutEpochRecord(es[i], []byte(v), raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		client := newSyncPeer(b, epochs)
		client.connect(b, server)
		b.StartTimer()
		n, err := client.y.SyncPeer(context.Background(), server.h.ID())
		if err != nil || n != validators*epochs {
			b.Fatalf("stored %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(validators*epochs)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// Equivocation proofs a node missed are fetched too, each checked before it
// is stored; a proof that does not check charges the peer.
func TestSyncFetchesProofs(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	client.y.DeliverProof = func(_ context.Context, p *pb.EquivocationProof) {
		eq, _ := protocol.CheckEquivocation(p)
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		client.st.PutEquivocation(eq.Epoch, []byte(eq.Validator), b)
	}
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	var proofs [][]byte
	for e := uint64(1); e <= syncwire.MaxProofs+3; e++ { // more than one response
		a := recordChain(t, k, []uint64{e})[0]
		b, _ := protocol.Seal(k, &pb.EpochRecord{Version: protocol.Version, Epoch: e, RoundsRoot: []byte("01234567890123456789012345678901"),
			ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)})
		p, err := protocol.NewEquivocationProof(a, b)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		if _, err := server.st.PutEquivocation(e, []byte(v), body); err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, body)
	}
	n, err := client.y.SyncPeer(context.Background(), server.h.ID())
	if err != nil || n != len(proofs) {
		t.Fatalf("fetched %d proofs, want %d: %v", n, len(proofs), err)
	}
	for e := uint64(1); e <= uint64(len(proofs)); e++ {
		if ok, err := client.st.HasEquivocation(e, []byte(v)); !ok || err != nil {
			t.Fatalf("no proof for epoch %d: %v", e, err)
		}
	}
	if n, _ := client.y.SyncPeer(context.Background(), server.h.ID()); n != 0 {
		t.Fatalf("second pass fetched %d", n)
	}

	bad, victim := newSyncPeer(t, 100), newSyncPeer(t, 100)
	victim.y.DeliverProof = client.y.DeliverProof
	hostileServer(bad.h, func(req []byte) [][]byte {
		if req[0] == syncwire.ReqProofs {
			forged := append([]byte{}, proofs[0]...)
			forged[len(forged)-1] ^= 1
			return [][]byte{binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(nil, 1), 0), forged}
		}
		return [][]byte{syncwire.EncodeHeads(nil)}
	})
	victim.connect(t, bad)
	if _, err := victim.y.SyncPeer(context.Background(), bad.h.ID()); !errors.Is(err, ErrBadPeer) {
		t.Fatalf("forged proof: %v, want a bad-peer error", err)
	}
}

// A history of more proofs than one pass may request is fetched over
// several passes, each continuing where the last stopped, and the record
// walk is not held up by it.
func TestSyncProofsSpreadOverPasses(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	client.y.DeliverProof = func(_ context.Context, p *pb.EquivocationProof) {
		eq, _ := protocol.CheckEquivocation(p)
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		client.st.PutEquivocation(eq.Epoch, []byte(eq.Validator), b)
	}
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	const total = syncProofRequests*syncwire.MaxProofs + 3
	for e := uint64(1); e <= total; e++ {
		a := recordChain(t, k, []uint64{e})[0]
		b, _ := protocol.Seal(k, &pb.EpochRecord{Version: protocol.Version, Epoch: e, RoundsRoot: []byte("01234567890123456789012345678901"),
			ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)})
		p, err := protocol.NewEquivocationProof(a, b)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		if _, err := server.st.PutEquivocation(e, []byte(v), body); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{syncProofRequests * syncwire.MaxProofs, 3, 0} {
		if n, err := client.y.SyncPeer(context.Background(), server.h.ID()); err != nil || n != want {
			t.Fatalf("pass %d: fetched %d, want %d: %v", i+1, n, want, err)
		}
	}
	for e := uint64(1); e <= total; e++ {
		if ok, err := client.st.HasEquivocation(e, []byte(v)); !ok || err != nil {
			t.Fatalf("no proof for epoch %d: %v", e, err)
		}
	}
}

// A validator proven to have equivocated in epoch 2: the peer holds the
// other record of the proof than the one the head links to. The client,
// holding the proof, stores it and walks on below it (the chain may
// continue from either record of a proof); without the proof it stops
// there (TestSyncStoresOnlyChainedRecords).
func TestSyncFollowsAProvenFork(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	honest := recordChain(t, k, []uint64{1, 2, 3})
	o, _ := protocol.Open(honest[0], pb.MessageType_EPOCH_RECORD)
	id1 := protocol.ID(o.Body)
	fork, _ := protocol.Seal(k, &pb.EpochRecord{Version: protocol.Version, Epoch: 2, RoundsRoot: []byte("01234567890123456789012345678901"),
		ScoringConfigHash: make([]byte, 32), PrevRecordHash: id1[:]})
	for e, raw := range map[uint64][]byte{1: honest[0], 2: fork, 3: honest[2]} {
		server.st.PutEpochRecord(e, []byte(v), raw)
	}
	p, err := protocol.NewEquivocationProof(honest[1], fork)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	client.st.PutEquivocation(2, []byte(v), body)
	n, err := client.y.SyncPeer(context.Background(), server.h.ID())
	if err != nil || n != 3 {
		t.Fatalf("stored %d, %v; want all 3", n, err)
	}
	if raw, _ := client.st.EpochRecord(2, []byte(v)); !bytes.Equal(raw, fork) {
		t.Fatal("epoch 2 holds another record than the peer's")
	}
	// The next head is walked to the fork and past it locally: the held
	// fork is not fetched and delivered again (every pass did, for every
	// fork of an equivocator's chain).
	next := recordChain(t, k, []uint64{1, 2, 3, 4})[3]
	server.st.PutEpochRecord(4, []byte(v), next)
	if n, err := client.y.SyncPeer(context.Background(), server.h.ID()); err != nil || n != 1 {
		t.Fatalf("after a new head: stored %d, %v; want only it", n, err)
	}
}

// A records request stops at the lowest record the server holds: below it
// the scan would find nothing (an equivocator's other branch is requested
// every pass), so the response says there is nothing further (next 0). A
// gap above the records still costs one request per syncScanEpochs.
func TestSyncScanStopsAtLowestRecord(t *testing.T) {
	server := newSyncPeer(t, 1<<40)
	key, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(key)
	first := uint64(1 << 30)
	epochs := []uint64{first, first + 1}
	for i, raw := range recordChain(t, key, epochs) {
		if err := server.st.PutEpochRecord(epochs[i], []byte(v), raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		before, next uint64
		n            uint32
	}{
		{first + 2, 0, 2},
		{first + 1, 0, 1},
		{first, 0, 0},
		{first + 2 + 2*syncScanEpochs, first + 2 + syncScanEpochs, 0},
	} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := server.y.writeRecords(w, v, c.before, syncwire.MaxRecords); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		n, next, err := readListHeader(bufio.NewReader(&buf), "records")
		if err != nil || n != c.n || next != c.next {
			t.Errorf("before %d: %d records, next %d (%v); want %d, next %d", c.before, n, next, err, c.n, c.next)
		}
	}
}

// checkChained fails unless each validator's records in st name the one
// before them as their prev_record_hash (the first names its own).
func checkChained(t *testing.T, st *store.Store) {
	t.Helper()
	last := map[peer.ID][]byte{}
	for ent, err := range st.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			t.Fatal(err)
		}
		o, err := protocol.Open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			t.Fatal(err)
		}
		v, prev := peer.ID(ent.Validator), o.Msg.(*pb.EpochRecord).PrevRecordHash
		if want, ok := last[v]; ok && !bytes.Equal(prev, want) {
			t.Fatalf("%s's record of epoch %d does not follow the one before it", v, ent.Epoch)
		}
		id := protocol.ID(o.Body)
		last[v] = id[:]
	}
}

// One peer holds at most servingPerPeer serving places: its third silent
// stream is reset at once, while another peer is still served.
func TestServingPlacesPerPeer(t *testing.T) {
	server, hog, other := newSyncPeer(t, 100), newSyncPeer(t, 100), newSyncPeer(t, 100)
	hog.connect(t, server)
	other.connect(t, server)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	for i, raw := range recordChain(t, k, []uint64{1, 2, 3}) {
		if err := server.st.PutEpochRecord(uint64(i+1), []byte(v), raw); err != nil {
			t.Fatal(err)
		}
	}
	// silent opens a stream and sends the first byte of a request, no more.
	silent := func() network.Stream {
		s, err := hog.h.NewStream(context.Background(), server.h.ID(), syncwire.SyncProtocol)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte{0x10}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	held := func() int {
		server.y.mu.Lock()
		defer server.y.mu.Unlock()
		return server.y.perPeer[hog.h.ID()]
	}
	for range servingPerPeer {
		defer silent().Reset()
	}
	for deadline := time.Now().Add(10 * time.Second); held() < servingPerPeer; time.Sleep(time.Millisecond) { // a bounded condition wait
		if time.Now().After(deadline) {
			t.Fatalf("the server admitted %d of the hog's streams", held())
		}
	}
	third := silent()
	third.SetReadDeadline(time.Now().Add(requestWait / 2))
	if _, err := third.Read(make([]byte, 1)); !errors.Is(err, network.ErrReset) {
		t.Fatalf("the hog's third stream was not reset: %v", err)
	}
	if n, err := other.y.SyncPeer(context.Background(), server.h.ID()); n != 3 || err != nil {
		t.Fatalf("another peer beside the hog synced %d records: %v", n, err)
	}
}

// Heads requests within headsTTL share one scan of the store while no
// record is stored; a record stored is served at once.
func TestServedHeadsShareAScan(t *testing.T) {
	y := newSyncPeer(t, 100)
	vk, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(vk)
	recs := recordChain(t, vk, []uint64{5, 6})
	if err := y.st.PutEpochRecord(5, []byte(v), recs[0]); err != nil {
		t.Fatal(err)
	}
	head := func(at time.Time) uint64 {
		t.Helper()
		hs, err := y.y.servedHeads(at)
		if err != nil || len(hs) != 1 {
			t.Fatalf("heads %v: %v", hs, err)
		}
		return hs[0].Epoch
	}
	t0 := time.Unix(1_800_000_000, 0)
	if e := head(t0); e != 5 {
		t.Fatalf("head at epoch %d, want 5", e)
	}
	first, _ := y.y.servedHeads(t0)
	if again, _ := y.y.servedHeads(t0.Add(headsTTL - time.Millisecond)); &again[0] != &first[0] {
		t.Fatal("a request within the TTL scanned again")
	}
	if err := y.st.PutEpochRecord(6, []byte(v), recs[1]); err != nil {
		t.Fatal(err)
	}
	if e := head(t0.Add(headsTTL - time.Millisecond)); e != 6 {
		t.Fatalf("a record stored within the TTL: head at epoch %d, want 6", e)
	}
}

// syncPut stores raw as v's record of epoch e in st.
func syncPut(t *testing.T, st *store.Store, v peer.ID, e uint64, raw []byte) {
	t.Helper()
	if err := st.PutEpochRecord(e, []byte(v), raw); err != nil {
		t.Fatal(err)
	}
}

// quietPass is a sync pass of client with server that must store nothing.
func quietPass(t *testing.T, client, server *syncPeerT) {
	t.Helper()
	client.y.headsAt, server.y.headsAt = time.Time{}, time.Time{} // the heads memo is not what is tested
	if n, err := client.y.SyncPeer(context.Background(), server.h.ID()); n != 0 || err != nil {
		t.Fatalf("a pass over held chains stored %d: %v", n, err)
	}
}

// A record gossip stored since the last pass, linking to the chain held
// whole, becomes its head without a walk: the pass reads the heads and
// that record, and scans no other (the index's count shows it did not).
func TestGossipedHeadNeedsNoScan(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	recs := recordChain(t, k, []uint64{1, 2, 3, 4, 5, 6})
	for i, raw := range recs[:5] {
		syncPut(t, server.st, v, uint64(i+1), raw)
		syncPut(t, client.st, v, uint64(i+1), raw)
	}
	quietPass(t, client, server)
	if client.y.indexCount != 5 || client.y.complete[v] != protocol.ID(mustOpen(t, recs[4]).Body) {
		t.Fatalf("first pass: index of %d records, chain complete at %x", client.y.indexCount, client.y.complete[v])
	}
	syncPut(t, server.st, v, 6, recs[5])
	syncPut(t, client.st, v, 6, recs[5])
	quietPass(t, client, server)
	if client.y.complete[v] != protocol.ID(mustOpen(t, recs[5]).Body) {
		t.Fatal("the gossiped head did not extend the complete chain")
	}
	if client.y.indexCount != 5 {
		t.Fatalf("the pass after gossip scanned the store: index of %d records", client.y.indexCount)
	}
}

// A chain no peer can finish (its first record is held nowhere) is walked
// every pass; the walk reuses the last scan's index until the store holds
// a record it did not count.
func TestWalkReusesTheIndex(t *testing.T) {
	server, client := newSyncPeer(t, 100), newSyncPeer(t, 100)
	client.connect(t, server)
	k, _, _ := crypto.GenerateEd25519Key(nil)
	v, _ := peer.IDFromPrivateKey(k)
	recs := recordChain(t, k, []uint64{1, 2, 3, 4})
	for i, raw := range recs[1:3] {
		syncPut(t, server.st, v, uint64(i+2), raw)
		syncPut(t, client.st, v, uint64(i+2), raw)
	}
	quietPass(t, client, server)
	first := reflect.ValueOf(client.y.index).Pointer()
	quietPass(t, client, server)
	if reflect.ValueOf(client.y.index).Pointer() != first {
		t.Fatal("a pass with no new record scanned the store again")
	}
	syncPut(t, server.st, v, 4, recs[3])
	syncPut(t, client.st, v, 4, recs[3])
	quietPass(t, client, server)
	if reflect.ValueOf(client.y.index).Pointer() == first || client.y.indexCount != 3 {
		t.Fatalf("after a new record the walk used a stale index (%d records)", client.y.indexCount)
	}
}

func mustOpen(t *testing.T, raw []byte) *protocol.Opened {
	t.Helper()
	o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// BenchmarkSteadySyncPass measures a pass against a peer holding the same
// 16 validators × 1000 records as this node, every chain already whole
// (BENCHMARKS.md): what each node pays every interval in the steady state.
func BenchmarkSteadySyncPass(b *testing.B) {
	const validators, epochs = 16, 1000
	server, client := newSyncPeer(b, epochs), newSyncPeer(b, epochs)
	client.connect(b, server)
	es := make([]uint64, epochs)
	for i := range es {
		es[i] = uint64(i + 1)
	}
	for range validators {
		k, _, _ := crypto.GenerateEd25519Key(nil)
		v, _ := peer.IDFromPrivateKey(k)
		for i, raw := range recordChain(b, k, es) {
			for _, st := range []*store.Store{server.st, client.st} {
				if err := st.PutEpochRecord(es[i], []byte(v), raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if n, err := client.y.SyncPeer(context.Background(), server.h.ID()); n != 0 || err != nil {
			b.Fatalf("stored %d: %v", n, err)
		}
	}
}
