package recordsync

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
	"google.golang.org/protobuf/proto"
)

// Record sync (SPEC §22): gossip delivers epoch records to whoever is online,
// so a node that was offline, restarted or joined late asks its peers for
// each validator's chain head and walks the chain back by hash, fetching the
// records it lacks. A fetched record is stored only if it is the one its
// successor's prev_record_hash names, so only records on a validator's
// signed chain are stored, whichever peer serves them.

// How a node serves and walks record sync (its frames and their bounds
// are syncwire's).
const (
	// syncScanEpochs is how many epochs one records request looks at; a
	// response names where it stopped, so a long absence takes more requests.
	syncScanEpochs = 4096
	// syncRequestsPerPass bounds the requests one pass sends one peer per
	// validator; the next pass continues.
	syncRequestsPerPass = 64
	syncStreamTimeout   = 20 * time.Second
	syncMaxServing      = 8
	// servingPerPeer bounds one peer's sync and evidence requests served
	// at once, and requestWait how long a request may take to arrive once
	// its stream is open: one peer cannot hold every serving place with
	// silent streams.
	servingPerPeer = 2
	requestWait    = 5 * time.Second
	// A peer charged this many times is disconnected and not asked again for
	// syncBan.
	syncMaxCharges = 3
	syncBan        = 10 * time.Minute
)

// Syncer serves and fetches epoch records.
type Syncer struct {
	h           host.Host
	st          *store.Store
	log         *slog.Logger
	allowed     func(peer.ID) bool // may this peer publish epoch records?
	latestEpoch func() uint64      // the latest epoch a record may be for (the current one, as gossip allows)
	// deliver hands a checked record to the node, which stores it (through
	// finality) or, if a different one is stored, proves the equivocation.
	deliver func(context.Context, *protocol.Opened)
	// DeliverProof stores a checked equivocation proof (nil: proofs are
	// not synced).
	DeliverProof func(context.Context, *pb.EquivocationProof)

	serving chan struct{} // bounds concurrent serves
	mu      sync.Mutex
	perPeer map[peer.ID]int // serves in progress by peer
	closed  bool
	active  sync.WaitGroup // serves in progress; close waits for them
	// complete holds, per validator, a head from which the chain is held
	// down to its first record, so later passes stop there.
	complete map[peer.ID][32]byte
	charges  map[peer.ID]int
	banned   map[peer.ID]time.Time
	running  map[peer.ID]bool

	// OwnEvidence: this node is a validator and serves its own round
	// evidence (evidence.go), at most evidenceMaxServing requests at once.
	OwnEvidence     bool
	evidenceServing chan struct{}
	// proofsFrom is, per peer, the epoch its next proof fetch starts at.
	proofsFrom map[peer.ID]uint64
	// headsMemo are the heads served at headsAt, with the store holding
	// headsCount records (servedHeads).
	headsMemo  []syncwire.Head
	headsAt    time.Time
	headsCount uint64
	// index is localChains' last scan, reused while the store holds as
	// many epoch records as it counted then (indexCount).
	index      map[peer.ID]*chain
	indexCount uint64
}

// New returns a syncer of st's records over h: allowed says who may
// publish epoch records, latestEpoch bounds the epochs it takes, deliver
// receives each record it stores.
func New(h host.Host, st *store.Store, log *slog.Logger, allowed func(peer.ID) bool, latestEpoch func() uint64,
	deliver func(context.Context, *protocol.Opened)) *Syncer {
	return &Syncer{h: h, st: st, log: log, allowed: allowed, latestEpoch: latestEpoch, deliver: deliver,
		serving: make(chan struct{}, syncMaxServing), perPeer: map[peer.ID]int{}, complete: map[peer.ID][32]byte{},
		charges: map[peer.ID]int{}, banned: map[peer.ID]time.Time{}, running: map[peer.ID]bool{},
		evidenceServing: make(chan struct{}, evidenceMaxServing), proofsFrom: map[peer.ID]uint64{}}
}

// ---- serving ----

// admit takes one of slots' places for a request on s, unless the syncer
// is closed, every place is taken or its peer holds servingPerPeer (then
// it resets s); release gives the place back.
func (y *Syncer) admit(s network.Stream, slots chan struct{}) (release func(), ok bool) {
	p := s.Conn().RemotePeer()
	y.mu.Lock()
	if ok = !y.closed && y.perPeer[p] < servingPerPeer; ok {
		select {
		case slots <- struct{}{}:
			y.perPeer[p]++
			y.active.Add(1)
		default:
			ok = false
		}
	}
	y.mu.Unlock()
	if !ok {
		s.Reset()
		return nil, false
	}
	return func() {
		y.mu.Lock()
		if y.perPeer[p]--; y.perPeer[p] == 0 {
			delete(y.perPeer, p)
		}
		y.mu.Unlock()
		<-slots
		y.active.Done()
	}, true
}

// readRequest admits a request on s to one of slots' places (admit), sets
// the stream's deadline and reads its one frame of at most max bytes. If
// ok, the caller answers and then calls release; else s is already ended.
func (y *Syncer) readRequest(s network.Stream, slots chan struct{}, limit time.Duration, max int) (req []byte, release func(), ok bool) {
	release, ok = y.admit(s, slots)
	if !ok {
		return nil, nil, false
	}
	s.SetDeadline(time.Now().Add(min(limit, requestWait)))
	req, err := protocol.ReadFrame(bufio.NewReader(s), max)
	if err != nil {
		s.Reset()
		release()
		return nil, nil, false
	}
	s.SetDeadline(time.Now().Add(limit))
	return req, release, true
}

// Serve answers one request on s. Requests are one bounded frame; the
// response is written under a deadline, and excess concurrent requests are
// refused.
func (y *Syncer) Serve(s network.Stream) {
	req, release, ok := y.readRequest(s, y.serving, syncStreamTimeout, syncwire.MaxRequest)
	if !ok {
		return
	}
	defer release()
	if len(req) == 0 {
		s.Reset()
		return
	}
	var err error
	w := bufio.NewWriter(s)
	switch req[0] {
	case syncwire.ReqHeads:
		if len(req) != 1 {
			s.Reset()
			return
		}
		var hs []syncwire.Head
		if hs, err = y.servedHeads(time.Now()); err != nil {
			y.log.Warn("sync: reading heads", "err", err)
			s.Reset()
			return
		}
		err = protocol.WriteFrame(w, syncwire.EncodeHeads(hs))
	case syncwire.ReqRecords:
		v, before, limit, perr := syncwire.DecodeRecordsRequest(req[1:])
		if perr != nil {
			s.Reset()
			return
		}
		err = y.writeRecords(w, v, before, limit)
	case syncwire.ReqProofs:
		from, ok := syncwire.DecodeProofsRequest(req)
		if !ok {
			s.Reset()
			return
		}
		err = y.writeProofs(w, from)
	default:
		s.Reset()
		return
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		s.Reset()
		return
	}
	s.Close()
}

// Close refuses further requests and waits for those being served, so the
// store can be closed after it.
func (y *Syncer) Close() {
	y.mu.Lock()
	y.closed = true
	y.mu.Unlock()
	y.active.Wait()
}

// heads lists, per validator, the latest record this node holds (at most
// syncwire.MaxHeads validators, those with the latest heads).
// headsTTL is how long served heads are reused: every heads request
// within it, whoever sends it, shares one scan of the store's records
// while no record is stored.
const headsTTL = time.Second

// servedHeads are the heads to serve at now: those of the last scan if it
// is under headsTTL old and no record was stored since, else a new
// scan's. A record stored rescans at once: a head a second stale once
// sent an auditor an epoch short of the one it had just been told of.
func (y *Syncer) servedHeads(now time.Time) ([]syncwire.Head, error) {
	count := y.recordCount()
	y.mu.Lock()
	if y.headsMemo != nil && now.Sub(y.headsAt) < headsTTL && y.headsCount == count {
		hs := y.headsMemo
		y.mu.Unlock()
		return hs, nil
	}
	y.mu.Unlock()
	hs, err := y.heads()
	if err != nil {
		return nil, err
	}
	y.mu.Lock()
	y.headsMemo, y.headsAt, y.headsCount = hs, now, count
	y.mu.Unlock()
	return hs, nil
}

// recordCount is how many epoch records the store holds, from its count
// of each validator's chain.
func (y *Syncer) recordCount() uint64 {
	count := uint64(0)
	for _, c := range y.st.EpochChains() {
		count += c.Count
	}
	return count
}

// heads is each validator's latest record, from the store's count of its
// chains (store.EpochChains) and one read each: no scan of the records. A
// latest record that does not decode is not served (audit reports it).
func (y *Syncer) heads() ([]syncwire.Head, error) {
	var hs []syncwire.Head
	for _, c := range y.st.EpochChains() {
		env, err := y.st.EpochRecord(c.Latest, c.Validator)
		if err != nil {
			return nil, err
		}
		o, err := protocol.Decode(env, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			continue
		}
		hs = append(hs, syncwire.Head{Validator: peer.ID(c.Validator), Epoch: c.Latest, ID: protocol.ID(o.Body)})
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Epoch != hs[j].Epoch {
			return hs[i].Epoch > hs[j].Epoch
		}
		return hs[i].Validator < hs[j].Validator
	})
	return hs[:min(len(hs), syncwire.MaxHeads)], nil
}

// writeRecords writes v's records below epoch before, latest first: a
// header (BE32 count ‖ BE64 next) and count envelope frames. next is where
// the scan stopped, the client continuing from it; 0 when nothing is held
// below.
func (y *Syncer) writeRecords(w *bufio.Writer, v peer.ID, before uint64, limit int) error {
	floor, err := y.lowestRecordEpoch()
	if err != nil {
		return err
	}
	var recs [][]byte
	size, next := 0, before
	for scanned := 0; next > floor && scanned < syncScanEpochs && len(recs) < limit; scanned++ {
		env, err := y.st.EpochRecord(next-1, []byte(v))
		if errors.Is(err, store.ErrNotFound) {
			next--
			continue
		}
		if err != nil {
			return err
		}
		if size+len(env) > syncwire.MaxRecordsBytes {
			break
		}
		recs, size = append(recs, env), size+len(env)
		next--
	}
	if next <= floor {
		next = 0 // nothing held below: the client stops here
	}
	return syncwire.WriteList(w, recs, next)
}

// lowestRecordEpoch is the epoch of the lowest record held, of any
// validator (0 if none): a scan below it would find nothing, and a client
// walking a chain whose first record is not held here (an equivocator's
// other branch) would otherwise cost a full syncScanEpochs of lookups per
// request.
func (y *Syncer) lowestRecordEpoch() (uint64, error) {
	for ent, err := range y.st.EpochRecords(0, ^uint64(0)) {
		return ent.Epoch, err
	}
	return 0, nil
}

// ---- fetching ----

// ErrBadPeer marks a response that is provably wrong: the peer is charged.
var ErrBadPeer = errors.New("bad sync data")

func badPeer(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadPeer, fmt.Sprintf(format, args...))
}

// readFrame is protocol.ReadFrame; a frame over its bound is bad data.
func readFrame(r *bufio.Reader, max int) ([]byte, error) {
	b, err := protocol.ReadFrame(r, max)
	if errors.Is(err, protocol.ErrTooLarge) {
		return nil, badPeer("%v", err)
	}
	return b, err
}

// request sends one request frame and returns a reader over the response.
func (y *Syncer) request(ctx context.Context, p peer.ID, req []byte) (network.Stream, *bufio.Reader, error) {
	s, err := y.h.NewStream(ctx, p, syncwire.SyncProtocol)
	if err != nil {
		return nil, nil, err
	}
	s.SetDeadline(time.Now().Add(syncStreamTimeout))
	if err := protocol.WriteFrame(s, req); err != nil {
		s.Reset()
		return nil, nil, err
	}
	s.CloseWrite()
	return s, bufio.NewReader(s), nil
}

func (y *Syncer) fetchHeads(ctx context.Context, p peer.ID) ([]syncwire.Head, error) {
	s, r, err := y.request(ctx, p, []byte{syncwire.ReqHeads})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	b, err := readFrame(r, syncwire.MaxHeadsFrame)
	if err != nil {
		return nil, err
	}
	hs, err := syncwire.DecodeHeads(b)
	if err != nil {
		return nil, badPeer("%v", err)
	}
	return hs, nil
}

// fetchRecords asks p for v's records below before; each is opened
// (signature, bounds, stateless rules) and must be v's, for a strictly
// lower epoch than the one before it and one that has ended. next is where
// p's scan stopped.
func (y *Syncer) fetchRecords(ctx context.Context, p, v peer.ID, before uint64) (recs []*protocol.Opened, next uint64, err error) {
	s, r, err := y.request(ctx, p, syncwire.EncodeRecordsRequest(v, before, syncwire.MaxRecords))
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	n, next, err := readListHeader(r, "records")
	if err != nil {
		return nil, 0, err
	}
	if n > syncwire.MaxRecords || next > before || (n == 0 && next == before) {
		return nil, 0, badPeer("records header: %d records, next %d for before %d", n, next, before)
	}
	last, ended, size := before, y.latestEpoch(), 0
	for i := range n {
		raw, err := readFrame(r, store.MaxEpochRecordLen)
		if err != nil {
			return nil, 0, err
		}
		if size += len(raw); size > syncwire.MaxRecordsBytes {
			return nil, 0, badPeer("records response over %d bytes", syncwire.MaxRecordsBytes)
		}
		o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			return nil, 0, badPeer("record %d: %v", i, err)
		}
		e := o.Msg.(*pb.EpochRecord).Epoch
		switch {
		case o.Author != v:
			return nil, 0, badPeer("record %d signed by %s, asked for %s", i, o.Author, v)
		case e >= last || e < next:
			return nil, 0, badPeer("record %d for epoch %d, outside [%d, %d)", i, e, next, last)
		case e > ended:
			return nil, 0, badPeer("record %d for epoch %d, which has not begun", i, e)
		}
		last = e
		recs = append(recs, o)
	}
	return recs, next, nil
}

// chain is what this node holds of one validator's records, by epoch.
type chain struct {
	epochs []uint64 // ascending
	ids    map[uint64][32]byte
	prevs  map[uint64][32]byte
}

func (c *chain) add(e uint64, id, prev [32]byte) {
	i := sort.Search(len(c.epochs), func(i int) bool { return c.epochs[i] >= e })
	if i == len(c.epochs) || c.epochs[i] != e {
		c.epochs = append(c.epochs[:i], append([]uint64{e}, c.epochs[i:]...)...)
	}
	c.ids[e], c.prevs[e] = id, prev
}

// below is the latest held epoch below e.
func (c *chain) below(e uint64) (uint64, bool) {
	i := sort.Search(len(c.epochs), func(i int) bool { return c.epochs[i] >= e })
	if i == 0 {
		return 0, false
	}
	return c.epochs[i-1], true
}

func (c *chain) clone() *chain {
	return &chain{epochs: slices.Clone(c.epochs), ids: maps.Clone(c.ids), prevs: maps.Clone(c.prevs)}
}

// localChains indexes every held epoch record by validator: a copy of the
// last scan's index while the store holds no record it did not count,
// else a new scan's.
func (y *Syncer) localChains() (map[peer.ID]*chain, error) {
	count := y.recordCount()
	y.mu.Lock()
	index := y.index
	fresh := index != nil && y.indexCount == count
	y.mu.Unlock()
	if !fresh {
		var err error
		if index, err = y.scanChains(); err != nil {
			return nil, err
		}
		y.mu.Lock()
		y.index, y.indexCount = index, count
		y.mu.Unlock()
	}
	out := make(map[peer.ID]*chain, len(index))
	for v, c := range index {
		out[v] = c.clone()
	}
	return out, nil
}

// scanChains reads every held epoch record into a by-validator index.
func (y *Syncer) scanChains() (map[peer.ID]*chain, error) {
	out := map[peer.ID]*chain{}
	for ent, err := range y.st.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			return nil, err
		}
		o, err := protocol.Decode(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			continue
		}
		v := peer.ID(ent.Validator)
		c := out[v]
		if c == nil {
			c = &chain{ids: map[uint64][32]byte{}, prevs: map[uint64][32]byte{}}
			out[v] = c
		}
		c.add(ent.Epoch, protocol.ID(o.Body), [32]byte(o.Msg.(*pb.EpochRecord).PrevRecordHash))
	}
	return out, nil
}

// extendsComplete reports whether head h is held here and links to the
// head from which this node holds v's chain whole (or is its first
// record): h then becomes that head with no walk, as it does each epoch
// for a record gossip delivered.
func (y *Syncer) extendsComplete(h syncwire.Head) bool {
	env, err := y.st.EpochRecord(h.Epoch, []byte(h.Validator))
	if err != nil {
		return false
	}
	o, err := protocol.Decode(env, pb.MessageType_EPOCH_RECORD)
	if err != nil || protocol.ID(o.Body) != h.ID {
		return false
	}
	prev := [32]byte(o.Msg.(*pb.EpochRecord).PrevRecordHash)
	y.mu.Lock()
	defer y.mu.Unlock()
	if prev != y.complete[h.Validator] {
		return false
	}
	y.complete[h.Validator] = h.ID
	return true
}

// SyncPeer fetches from p every record this node lacks on the chains of
// p's heads, and returns how many it stored. An error wrapping ErrBadPeer
// means p served provably bad data.
func (y *Syncer) SyncPeer(ctx context.Context, p peer.ID) (int, error) {
	hs, err := y.fetchHeads(ctx, p)
	if err != nil {
		return 0, err
	}
	stored, err := y.syncProofsFrom(ctx, p)
	if err != nil {
		return stored, err
	}
	var local map[peer.ID]*chain // indexed for the first head to walk
	for _, h := range hs {
		if !y.allowed(h.Validator) || h.Epoch > y.latestEpoch() {
			continue
		}
		y.mu.Lock()
		done := y.complete[h.Validator] == h.ID
		y.mu.Unlock()
		if done || y.extendsComplete(h) {
			continue
		}
		if local == nil {
			if local, err = y.localChains(); err != nil {
				return stored, err
			}
		}
		c := local[h.Validator]
		if c == nil {
			c = &chain{ids: map[uint64][32]byte{}, prevs: map[uint64][32]byte{}}
			local[h.Validator] = c
		}
		n, err := y.walk(ctx, p, h, c)
		stored += n
		if err != nil {
			return stored, err
		}
	}
	return stored, nil
}

// walk follows v's chain down from head h: a link held here is followed
// locally, a missing one is fetched from p and stored once its hash is the
// one expected. It stops at the chain's first record (prev zero), when p
// lacks the next link, or at a record that conflicts with one held (a
// validator that signed two records for one epoch: not p's fault).
func (y *Syncer) walk(ctx context.Context, p peer.ID, h syncwire.Head, c *chain) (int, error) {
	v := h.Validator
	expect, before := h.ID, h.Epoch+1
	// followLocal steps over held links, a held record that is the other
	// of a proven pair with the expected one included (the chain may
	// continue from either, as below); true once the chain's first record
	// is reached.
	followLocal := func() bool {
		for {
			e, ok := c.below(before)
			if !ok || c.ids[e] != expect && !y.provenPair(v, e, expect, c.ids[e]) {
				return false
			}
			if c.prevs[e] == [32]byte{} {
				y.mu.Lock()
				y.complete[v] = h.ID
				y.mu.Unlock()
				return true
			}
			expect, before = c.prevs[e], e
		}
	}
	stored := 0
	for range syncRequestsPerPass {
		if followLocal() || before == 0 {
			return stored, nil
		}
		recs, next, err := y.fetchRecords(ctx, p, v, before)
		if err != nil {
			return stored, err
		}
		if len(recs) == 0 {
			if next == 0 {
				return stored, nil // p has nothing further down
			}
			before = next
			continue
		}
		for _, o := range recs {
			rec := o.Msg.(*pb.EpochRecord)
			if rec.Epoch >= before {
				continue // below a link followed locally meanwhile
			}
			id := protocol.ID(o.Body)
			if held, ok := c.ids[rec.Epoch]; ok && held != id {
				y.deliver(ctx, o) // v signed two records for this epoch: the node proves it
				return stored, nil
			}
			if id != expect {
				if !y.provenPair(v, rec.Epoch, expect, id) {
					return stored, nil // not the record the chain names: p lacks it
				}
				// The other record of a proven equivocation: the chain
				// may continue from either (SPEC §21).
				expect = id
			}
			y.deliver(ctx, o)
			if raw, err := y.st.EpochRecord(rec.Epoch, []byte(v)); err != nil || !bytes.Equal(raw, o.Raw) {
				return stored, nil // not stored (the node logged why)
			}
			stored++
			c.add(rec.Epoch, id, [32]byte(rec.PrevRecordHash))
			if followLocal() {
				return stored, nil
			}
		}
	}
	return stored, nil
}

// provenPair reports whether this node holds a proof that v signed both a
// and b for epoch e.
func (y *Syncer) provenPair(v peer.ID, e uint64, a, b [32]byte) bool {
	for q, err := range y.st.Equivocations(e, e) {
		if err != nil || peer.ID(q.Validator) != v {
			continue
		}
		var m pb.EquivocationProof
		if proto.Unmarshal(q.Proof, &m) != nil {
			return false
		}
		var ids [][32]byte
		for _, raw := range [][]byte{m.RecordA, m.RecordB} {
			if o, err := protocol.Decode(raw, pb.MessageType_EPOCH_RECORD); err == nil {
				ids = append(ids, protocol.ID(o.Body))
			}
		}
		return slices.Contains(ids, a) && slices.Contains(ids, b)
	}
	return false
}

// charge records that p served bad data: its connection manager tag drops,
// and after syncMaxCharges it is disconnected and not asked for a while.
func (y *Syncer) charge(p peer.ID, err error) {
	y.mu.Lock()
	y.charges[p]++
	n := y.charges[p]
	if n >= syncMaxCharges {
		y.banned[p] = time.Now().Add(syncBan)
	}
	y.mu.Unlock()
	y.h.ConnManager().UpsertTag(p, "pog-sync", func(v int) int { return v - 10 })
	y.log.Warn("sync: peer served bad data", "peer", p, "charges", n, "err", err)
	if n >= syncMaxCharges {
		y.h.Network().ClosePeer(p)
	}
}

// prune forgets what it holds about peers neither connected (connected)
// nor banned at now: their charges and where their next proof fetch
// starts, so that peer IDs that come and go do not grow the maps.
func (y *Syncer) prune(now time.Time, connected func(peer.ID) bool) {
	y.mu.Lock()
	defer y.mu.Unlock()
	for p, until := range y.banned {
		if !now.Before(until) && !connected(p) {
			delete(y.banned, p)
		}
	}
	gone := func(p peer.ID) bool {
		_, banned := y.banned[p]
		return !banned && !connected(p)
	}
	for p := range y.charges {
		if gone(p) {
			delete(y.charges, p)
		}
	}
	for p := range y.proofsFrom {
		if gone(p) {
			delete(y.proofsFrom, p)
		}
	}
}

// syncWith runs one pass against p unless one is already running or p is
// banned.
func (y *Syncer) syncWith(ctx context.Context, p peer.ID) {
	y.mu.Lock()
	if y.running[p] || time.Now().Before(y.banned[p]) {
		y.mu.Unlock()
		return
	}
	y.running[p] = true
	y.mu.Unlock()
	defer func() {
		y.mu.Lock()
		delete(y.running, p)
		y.mu.Unlock()
	}()
	n, err := y.SyncPeer(ctx, p)
	switch {
	case errors.Is(err, ErrBadPeer):
		y.charge(p, err)
	case err != nil:
		y.log.Debug("sync pass ended early", "peer", p, "err", err)
	}
	if n > 0 {
		y.log.Info("sync: fetched epoch records", "peer", p, "records", n)
	}
}

// Run syncs with each newly connected peer and, every interval (at this
// node's phase of it), with up to four connected peers, until ctx ends.
func (y *Syncer) Run(ctx context.Context, interval time.Duration, wg *sync.WaitGroup) {
	connected := make(chan peer.ID, 64)
	notifee := &network.NotifyBundle{ConnectedF: func(_ network.Network, c network.Conn) {
		select {
		case connected <- c.RemotePeer():
		default: // the periodic pass catches up
		}
	}}
	y.h.Network().Notify(notifee)
	defer y.h.Network().StopNotify(notifee)
	for _, p := range y.h.Network().Peers() {
		select {
		case connected <- p:
		default:
		}
	}
	tick := time.NewTimer(phase(y.h.ID(), interval))
	defer tick.Stop()
	var last peer.ID
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-connected:
			wg.Add(1)
			go func() {
				defer wg.Done()
				y.syncWith(ctx, p)
			}()
		case now := <-tick.C:
			tick.Reset(interval)
			y.prune(now, func(p peer.ID) bool { return y.h.Network().Connectedness(p) == network.Connected })
			peers := nextPeers(y.h.Network().Peers(), last, 4)
			if len(peers) > 0 {
				last = peers[len(peers)-1]
			}
			for _, p := range peers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					y.syncWith(ctx, p)
				}()
			}
		}
	}
}

// phase is where in each interval a node's periodic passes fall, spread
// by its peer ID: nodes started together (a network restarted at once, a
// simulation) would otherwise all ask their common peers (the validators)
// at the same instants, past those peers' serving places (syncMaxServing),
// and a node whose every pass was refused so would never catch up.
func phase(id peer.ID, interval time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(interval))
}

// nextPeers picks the n peers after `after` in peer ID order, wrapping
// around: every peer is visited within ⌈len/n⌉ ticks, whatever the
// connection order, and the choice is the same in every run of one network.
func nextPeers(peers []peer.ID, after peer.ID, n int) []peer.ID {
	sorted := slices.Clone(peers)
	slices.Sort(sorted)
	start, _ := slices.BinarySearch(sorted, after)
	if start < len(sorted) && sorted[start] == after {
		start++
	}
	var out []peer.ID
	for i := 0; i < min(n, len(sorted)); i++ {
		out = append(out, sorted[(start+i)%len(sorted)])
	}
	return out
}

// Interval is how often a node syncs with some of its peers: twice an
// epoch, within [2 s, 30 s].
func Interval(epoch time.Duration) time.Duration {
	return max(2*time.Second, min(30*time.Second, epoch/2))
}
