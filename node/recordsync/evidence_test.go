package recordsync

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
)

// TestFetchEvidenceRefusesBadData: a peer answering the evidence protocol
// with malformed, oversized, foreign or disordered data is caught as a bad
// peer, and one that keeps no evidence as ErrNoEvidence.
func TestFetchEvidenceRefusesBadData(t *testing.T) {
	server := bareHost(t)
	defer server.Close()
	if err := server.Network().Listen(mustAddr(t, "/ip4/127.0.0.1/tcp/0")); err != nil {
		t.Fatal(err)
	}
	const e = 7
	rec := func(v peer.ID, epoch, round uint64) []byte {
		return record.EncodeRound(&store.RoundRecord{Epoch: epoch, Round: round, Miner: []byte{1}, Validator: []byte(v),
			Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"})
	}
	header := func(status byte, n, next uint32) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{status}, n), next)
	}
	me := server.ID()
	cp, _ := store.EncodeCheckpointState(map[string]float64{"m": 0.5})
	cases := []struct {
		name       string
		frames     [][]byte
		raw        []byte // written after the frames
		bad        bool
		none       bool
		checkpoint bool // FetchCheckpoint's request, not FetchEvidence's
	}{
		{"not a validator", [][]byte{header(syncwire.StatusNone, 0, 0)}, nil, false, true, false},
		{"pruned", [][]byte{header(syncwire.StatusPruned, 0, 0)}, nil, false, true, false},
		{"unknown status", [][]byte{header(9, 0, 0)}, nil, true, false, false},
		{"too many items", [][]byte{header(syncwire.StatusOK, syncwire.MaxItems+1, 0)}, nil, true, false, false},
		{"next not after the page", [][]byte{header(syncwire.StatusOK, 1, 5), rec(me, e, 1)}, nil, true, false, false},
		{"garbage record", [][]byte{header(syncwire.StatusOK, 1, 0), {1, 2, 3}}, nil, true, false, false},
		{"another validator's record", [][]byte{header(syncwire.StatusOK, 1, 0), rec("other", e, 1)}, nil, true, false, false},
		{"another epoch's record", [][]byte{header(syncwire.StatusOK, 1, 0), rec(me, e+1, 1)}, nil, true, false, false},
		{"records out of order", [][]byte{header(syncwire.StatusOK, 2, 0), rec(me, e, 2), rec(me, e, 1)}, nil, true, false, false},
		{"frame over the bound", [][]byte{header(syncwire.StatusOK, 1, 0)}, binary.AppendUvarint(nil, store.MaxRoundLen+1), true, false, false},
		{"trailing data", [][]byte{header(syncwire.StatusOK, 0, 0)}, []byte{0}, true, false, false},
		{"checkpoint: not canonical", [][]byte{header(syncwire.StatusOK, 1, 0), append(slices.Clone(cp), 0)}, nil, true, false, true},
		{"checkpoint: two of one epoch", [][]byte{header(syncwire.StatusOK, 2, 0), cp, cp}, nil, true, false, true},
		{"checkpoint: paged", [][]byte{header(syncwire.StatusOK, 1, 1), cp}, nil, true, false, true},
		{"checkpoint: pruned", [][]byte{header(syncwire.StatusPruned, 0, 0)}, nil, false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server.SetStreamHandler(syncwire.EvidenceProtocol, func(s network.Stream) {
				defer s.Close()
				protocol.ReadFrame(bufio.NewReader(s), syncwire.RequestLen)
				w := bufio.NewWriter(s)
				for _, f := range c.frames {
					protocol.WriteFrame(w, f)
				}
				w.Write(c.raw)
				w.Flush()
			})
			client := bareHost(t)
			defer client.Close()
			if err := client.Connect(context.Background(), peer.AddrInfo{ID: me, Addrs: server.Addrs()}); err != nil {
				t.Fatal(err)
			}
			var err error
			if c.checkpoint {
				_, _, err = FetchCheckpoint(context.Background(), client, me, e)
			} else {
				_, err = FetchEvidence(context.Background(), client, me, e)
			}
			if errors.Is(err, ErrBadPeer) != c.bad || errors.Is(err, ErrNoEvidence) != c.none {
				t.Fatalf("got %v; want bad peer %v, no evidence %v", err, c.bad, c.none)
			}
		})
	}
}

func mustAddr(t *testing.T, s string) ma.Multiaddr {
	t.Helper()
	a, err := ma.NewMultiaddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEvidencePages: a validator's epoch of more rounds than one response
// carries comes whole, in store order, over several requests; a node that
// is no validator serves none.
func TestEvidencePages(t *testing.T) {
	server := bareHost(t)
	defer server.Close()
	if err := server.Network().Listen(mustAddr(t, "/ip4/127.0.0.1/tcp/0")); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const e, n = 3, 2*syncwire.MaxItems + 5
	for i := range n {
		r := &store.RoundRecord{Epoch: e, Round: uint64(i + 1), Miner: []byte{1}, Validator: []byte(server.ID()),
			Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"}
		if err := st.PutRound(r); err != nil {
			t.Fatal(err)
		}
	}
	other := &store.RoundRecord{Epoch: e, Round: 1, Miner: []byte{2}, Validator: []byte("someone else"),
		Challenge: []byte{3}, Verdict: store.VerdictFailed, Reason: "x"}
	if err := st.PutRound(other); err != nil {
		t.Fatal(err)
	}
	y := New(server, st, slog.New(slog.DiscardHandler), func(peer.ID) bool { return true }, func() uint64 { return e }, nil)
	y.OwnEvidence = true
	server.SetStreamHandler(syncwire.EvidenceProtocol, y.ServeEvidence)
	client := bareHost(t)
	defer client.Close()
	if err := client.Connect(context.Background(), peer.AddrInfo{ID: server.ID(), Addrs: server.Addrs()}); err != nil {
		t.Fatal(err)
	}
	ev, err := FetchEvidence(context.Background(), client, server.ID(), e)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Rounds) != n {
		t.Fatalf("%d rounds fetched, want %d", len(ev.Rounds), n)
	}
	for i, r := range ev.Rounds {
		if r.Round != uint64(i+1) {
			t.Fatalf("round %d fetched at position %d", r.Round, i)
		}
	}
	y.OwnEvidence = false
	if _, err := FetchEvidence(context.Background(), client, server.ID(), e); !errors.Is(err, ErrNoEvidence) {
		t.Fatalf("a non-validator served evidence: %v", err)
	}
}

// bareHost is a libp2p host listening nowhere until told to.
func bareHost(t *testing.T) host.Host {
	t.Helper()
	h, err := libp2p.New(libp2p.NoListenAddrs)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
