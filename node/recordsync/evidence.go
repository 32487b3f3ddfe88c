package recordsync

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/syncwire"
	"github.com/pog-network/pog/store"
)

// Evidence exchange (SPEC §22.1): a validator serves its own round evidence
// of an epoch, the round records whose hashes make its record's
// rounds_root and the announces scoring read, so that anyone can recompute
// its weights. Requests and responses are bounded; every frame a side
// holds is reserved in the stream's resource scope first.

// How a node serves evidence (its frames and their bounds are syncwire's).
const (
	evidenceMaxServing  = 4
	evidenceStreamLimit = 30 * time.Second
)

// ErrNoEvidence: the peer keeps no round evidence of that epoch.
var ErrNoEvidence = errors.New("the peer holds no round evidence of this epoch")

// ErrEvidencePruned (an ErrNoEvidence): the validator pruned that epoch's
// evidence past its retention (SPEC §21).
var ErrEvidencePruned = fmt.Errorf("%w: pruned", ErrNoEvidence)

// ---- serving (on Syncer, which owns the store's serving lifetime) ----

// ServeEvidence answers one evidence request.
func (y *Syncer) ServeEvidence(s network.Stream) {
	req, release, ok := y.readRequest(s, y.evidenceServing, evidenceStreamLimit, syncwire.RequestLen)
	if !ok {
		return
	}
	defer release()
	kind, e, from, ok := syncwire.DecodeEvidenceRequest(req)
	if !ok {
		s.Reset()
		return
	}
	status, items, next, err := y.evidencePage(s, kind, e, from)
	reserved := 0 // items come back reserved, even with an error
	for _, it := range items {
		reserved += len(it)
	}
	defer s.Scope().ReleaseMemory(reserved)
	if err != nil {
		y.log.Warn("evidence: serving failed", "epoch", e, "err", err)
		s.Reset()
		return
	}
	w := bufio.NewWriter(s)
	err = protocol.WriteFrame(w, syncwire.EvidenceHeader(status, len(items), next))
	for _, it := range items {
		if err == nil {
			err = protocol.WriteFrame(w, it)
		}
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

// evidencePage collects the items of epoch e from index from on, each
// reserved in s's scope (the caller releases them); next is the index
// to ask from next, or 0 when none follow.
func (y *Syncer) evidencePage(s network.Stream, kind byte, e uint64, from int) (byte, [][]byte, int, error) {
	if !y.OwnEvidence && kind != syncwire.KindOffSchedule {
		return syncwire.StatusNone, nil, 0, nil
	}
	if kind == syncwire.KindCheckpoint {
		return y.checkpointPage(s, e)
	}
	if bound, err := y.st.EvidenceFrom(); err != nil {
		return 0, nil, 0, err
	} else if e < bound {
		return syncwire.StatusPruned, nil, 0, nil
	}
	var items [][]byte
	size, i, full := 0, 0, false
	// add takes the i-th item unless the page is full; false: stop.
	add := func(b []byte) (bool, error) {
		defer func() { i++ }()
		if i < from {
			return true, nil
		}
		if len(items) == syncwire.MaxItems || len(items) > 0 && size+len(b) > syncwire.MaxBytes {
			full = true
			return false, nil
		}
		if err := s.Scope().ReserveMemory(len(b), network.ReservationPriorityMedium); err != nil {
			if len(items) > 0 {
				full = true // the client asks again for the rest
				return false, nil
			}
			return false, fmt.Errorf("evidence stream memory budget: %w", err)
		}
		items, size = append(items, b), size+len(b)
		return true, nil
	}
	self := []byte(y.h.ID())
	var err error
	switch kind {
	case syncwire.KindRounds:
		err = addEach(y.st.Rounds(e, e), func(r *store.RoundRecord) []byte {
			return ownEncoding(r.Validator, self, record.EncodeRound, r)
		}, add)
	case syncwire.KindHosts:
		err = addEach(y.st.HostRounds(e, e), func(r *store.HostRecord) []byte {
			return ownEncoding(r.Validator, self, record.EncodeHost, r)
		}, add)
	case syncwire.KindOffSchedule:
		err = addEach(y.st.OffSchedules(e, e), func(o store.OffSchedule) []byte {
			return append(binary.BigEndian.AppendUint64(nil, uint64(o.At)), o.Envelope...)
		}, add)
	default:
		err = addEach(y.st.Announces(e), func(a store.AnnounceEntry) []byte { return a.Envelope }, add)
	}
	if err != nil {
		return 0, items, 0, err
	}
	next := 0
	if full {
		next = from + len(items)
	}
	return syncwire.StatusOK, items, next, nil
}

// checkpointPage is this validator's checkpoint of epoch e as one item
// (EncodeCheckpointState), or none; checkpoints are never pruned.
func (y *Syncer) checkpointPage(s network.Stream, e uint64) (byte, [][]byte, int, error) {
	cp, found, err := y.st.LatestCheckpoint([]byte(y.h.ID()), e+1)
	if err != nil || !found || cp.Epoch != e {
		return syncwire.StatusOK, nil, 0, err
	}
	b, err := store.EncodeCheckpointState(cp.Penalties)
	if err != nil {
		return 0, nil, 0, err
	}
	if err := s.Scope().ReserveMemory(len(b), network.ReservationPriorityMedium); err != nil {
		return 0, nil, 0, fmt.Errorf("evidence stream memory budget: %w", err)
	}
	return syncwire.StatusOK, [][]byte{b}, 0, nil
}

// addEach hands add the encoding of each item of seq (nil: skipped) until
// add stops or fails, or seq fails.
func addEach[R any](seq iter.Seq2[R, error], enc func(R) []byte, add func([]byte) (bool, error)) error {
	for r, err := range seq {
		if err != nil {
			return err
		}
		b := enc(r)
		if b == nil {
			continue
		}
		if more, err := add(b); err != nil || !more {
			return err
		}
	}
	return nil
}

// ownEncoding is encode(r) for a record this validator (self) wrote, nil
// for another's.
func ownEncoding[R any](validator, self []byte, encode func(R) []byte, r R) []byte {
	if !bytes.Equal(validator, self) {
		return nil
	}
	return encode(r)
}

// ---- fetching ----

// EpochEvidence is one validator's evidence of one epoch, as fetched and
// checked: its round records in store order and the announces it holds.
type EpochEvidence struct {
	Rounds    []*store.RoundRecord
	Announces []store.AnnounceEntry
	Hosts     []*store.HostRecord
}

// FetchEvidence asks validator v (connected through h) for its evidence of
// epoch e. Every record must decode and validate, be v's and e's, and come
// in store order; every announce must verify and come in miner order. An
// error wrapping ErrBadPeer means v served provably bad data; ErrNoEvidence
// that it keeps none of e.
func FetchEvidence(ctx context.Context, h host.Host, v peer.ID, e uint64) (*EpochEvidence, error) {
	ev := &EpochEvidence{}
	var lastKey []byte
	size := 0
	for _, kind := range []byte{syncwire.KindRounds, syncwire.KindAnnounces, syncwire.KindHosts} {
		for from := 0; ; {
			next, err := fetchEvidencePage(ctx, h, v, kind, e, from, func(b []byte) error {
				if size += len(b); size > syncwire.MaxEpochBytes {
					return badPeer("evidence of epoch %d over %d bytes", e, syncwire.MaxEpochBytes)
				}
				if kind == syncwire.KindAnnounces {
					return ev.addAnnounce(e, b)
				}
				if kind == syncwire.KindHosts {
					return ev.addHost(v, e, b)
				}
				r, err := record.DecodeRound(b)
				if err != nil {
					return badPeer("round record: %v", err)
				}
				key := store.RoundKey(r.Epoch, r.Round, r.Miner)
				switch {
				case peer.ID(r.Validator) != v || r.Epoch != e:
					return badPeer("round record of %s epoch %d, asked for %s epoch %d", peer.ID(r.Validator), r.Epoch, v, e)
				case lastKey != nil && bytes.Compare(key, lastKey) <= 0:
					return badPeer("round records out of store order")
				}
				lastKey = key
				ev.Rounds = append(ev.Rounds, r)
				return nil
			})
			if err != nil {
				return nil, err
			}
			if next == 0 {
				break
			}
			if next > syncwire.MaxEpochItems {
				return nil, badPeer("evidence of epoch %d: over %d items", e, syncwire.MaxEpochItems)
			}
			from = next
		}
	}
	return ev, nil
}

// FetchCheckpoint asks validator v for its scorer checkpoint of epoch e;
// found is false if it has none. A checkpoint is unsigned state (SPEC §21):
// an audit resuming from it recomputes every later record, which catches
// one that changes a penalty that matters.
func FetchCheckpoint(ctx context.Context, h host.Host, v peer.ID, e uint64) (cp store.Checkpoint, found bool, err error) {
	next, err := fetchEvidencePage(ctx, h, v, syncwire.KindCheckpoint, e, 0, func(b []byte) error {
		if found {
			return badPeer("two checkpoints of epoch %d", e)
		}
		p, err := store.DecodeCheckpointState(b)
		if err != nil {
			return badPeer("checkpoint of epoch %d: %v", e, err)
		}
		cp, found = store.Checkpoint{Epoch: e, Validator: []byte(v), Penalties: p}, true
		return nil
	})
	if err == nil && next != 0 {
		err = badPeer("checkpoint of epoch %d paged", e)
	}
	if err != nil {
		return store.Checkpoint{}, false, err
	}
	return cp, found, nil
}

// FetchOffSchedule asks node p for the off-schedule challenges it kept
// of epoch e (SPEC §16). Each must open as a challenge naming p, one
// signer at most store.MaxOffSchedule times and each of its challenges once, at
// most syncwire.MaxEpochBytes in all: what a signature proves is that its
// signer challenged p in that epoch (against a signer without stake, that
// it challenged off schedule).
func FetchOffSchedule(ctx context.Context, h host.Host, p peer.ID, e uint64) ([]store.OffSchedule, error) {
	c := newOffScheduleCheck(p, e)
	for from := 0; ; {
		next, err := fetchEvidencePage(ctx, h, p, syncwire.KindOffSchedule, e, from, c.take)
		if err != nil {
			return nil, err
		}
		if next == 0 {
			return c.out, nil
		}
		if next > syncwire.MaxEpochItems {
			return nil, badPeer("off-schedule challenges of epoch %d: over %d items", e, syncwire.MaxEpochItems)
		}
		from = next
	}
}

// offScheduleCheck checks the off-schedule challenges p serves of epoch e,
// page after page, and collects them.
type offScheduleCheck struct {
	p    peer.ID
	e    uint64
	seen map[signedID]bool
	per  map[peer.ID]int
	size int
	out  []store.OffSchedule
}

func newOffScheduleCheck(p peer.ID, e uint64) *offScheduleCheck {
	return &offScheduleCheck{p: p, e: e, seen: map[signedID]bool{}, per: map[peer.ID]int{}}
}

// signedID is a kept challenge as the store keys it: one body signed by
// two validators is two challenges.
type signedID struct {
	signer peer.ID
	id     [32]byte
}

// take checks and keeps one item: BE64 receipt ‖ challenge envelope.
func (c *offScheduleCheck) take(b []byte) error {
	if len(b) <= 8 {
		return badPeer("off-schedule challenge of %d bytes", len(b))
	}
	if c.size += len(b); c.size > syncwire.MaxEpochBytes {
		return badPeer("off-schedule challenges of epoch %d over %d bytes", c.e, syncwire.MaxEpochBytes)
	}
	o, err := protocol.Open(b[8:], pb.MessageType_CHALLENGE)
	if err != nil {
		return badPeer("off-schedule challenge: %v", err)
	}
	id := protocol.ID(o.Body)
	switch {
	case peer.ID(o.Msg.(*pb.Challenge).Miner) != c.p:
		return badPeer("off-schedule challenge for another miner")
	case c.seen[signedID{o.Author, id}]:
		return badPeer("off-schedule challenge served twice")
	case c.per[o.Author] == store.MaxOffSchedule:
		return badPeer("over %d off-schedule challenges of one signer in epoch %d", store.MaxOffSchedule, c.e)
	}
	c.seen[signedID{o.Author, id}] = true
	c.per[o.Author]++
	c.out = append(c.out, store.OffSchedule{Epoch: c.e, Signer: []byte(o.Author), ID: id,
		At: int64(binary.BigEndian.Uint64(b)), Envelope: b[8:]})
	return nil
}

func (ev *EpochEvidence) addHost(v peer.ID, e uint64, b []byte) error {
	r, err := record.DecodeHost(b)
	if err != nil {
		return badPeer("host record: %v", err)
	}
	if peer.ID(r.Validator) != v || r.Epoch != e {
		return badPeer("host record of %s epoch %d, asked for %s epoch %d", peer.ID(r.Validator), r.Epoch, v, e)
	}
	if n := len(ev.Hosts); n > 0 {
		p := ev.Hosts[n-1]
		if bytes.Compare(store.RoundKey(r.Epoch, r.Round, r.Miner), store.RoundKey(p.Epoch, p.Round, p.Miner)) <= 0 {
			return badPeer("host records out of store order")
		}
	}
	ev.Hosts = append(ev.Hosts, r)
	return nil
}

func (ev *EpochEvidence) addAnnounce(e uint64, b []byte) error {
	o, err := protocol.Open(b, pb.MessageType_MINER_ANNOUNCE)
	if err != nil {
		return badPeer("announce: %v", err)
	}
	m := []byte(o.Author)
	if n := len(ev.Announces); n > 0 && bytes.Compare(m, ev.Announces[n-1].Miner) <= 0 {
		return badPeer("announces out of miner order")
	}
	ev.Announces = append(ev.Announces, store.AnnounceEntry{Epoch: e, Miner: m, Envelope: b})
	return nil
}

// fetchEvidencePage sends one request and hands each item to take; it
// returns where the next page starts (0: none).
func fetchEvidencePage(ctx context.Context, h host.Host, v peer.ID, kind byte, e uint64, from int, take func([]byte) error) (int, error) {
	s, err := h.NewStream(ctx, v, syncwire.EvidenceProtocol)
	if err != nil {
		return 0, err
	}
	defer s.Reset() // after a full read, a no-op
	s.SetDeadline(time.Now().Add(evidenceStreamLimit))
	if err := protocol.WriteFrame(s, syncwire.EncodeEvidenceRequest(kind, e, from)); err != nil {
		return 0, err
	}
	s.CloseWrite()
	next, err := readEvidencePage(s.Scope(), bufio.NewReader(s), kind, from, take)
	if err != nil {
		return 0, err
	}
	s.Close()
	return next, nil
}

// memScope is the part of a stream's resource scope a read reserves in.
type memScope interface {
	ReserveMemory(size int, prio uint8) error
	ReleaseMemory(size int)
}

// readEvidencePage reads one response to a request of kind from item
// from, to its end, handing each item to take.
func readEvidencePage(scope memScope, r *bufio.Reader, kind byte, from int, take func([]byte) error) (int, error) {
	hdr, err := readFrame(r, syncwire.HeaderLen)
	if err != nil {
		return 0, err
	}
	status, n, next, ok := syncwire.ParseEvidenceHeader(hdr)
	if !ok {
		return 0, badPeer("evidence header of %d bytes", len(hdr))
	}
	switch {
	case status == syncwire.StatusNone:
		return 0, fmt.Errorf("%w (it is not a validator)", ErrNoEvidence)
	case status == syncwire.StatusPruned:
		return 0, ErrEvidencePruned
	case status != syncwire.StatusOK || n > syncwire.MaxItems || next != 0 && next != from+int(n) || next != 0 && n == 0:
		return 0, badPeer("evidence header: status %d, %d items, next %d from %d", status, n, next, from)
	}
	max := store.MaxRoundLen
	switch kind {
	case syncwire.KindAnnounces:
		max = store.MaxAnnounceLen
	case syncwire.KindCheckpoint:
		max = store.MaxCheckpointLen
	case syncwire.KindOffSchedule:
		max = store.MaxOffScheduleLen
	}
	size := 0
	for range n {
		b, err := readScoped(scope, r, max)
		if err != nil {
			return 0, err
		}
		if size += len(b); size > syncwire.MaxBytes+max {
			return 0, badPeer("evidence response over %d bytes", syncwire.MaxBytes)
		}
		if err := take(b); err != nil {
			return 0, err
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return 0, badPeer("evidence response: trailing data")
	}
	return next, nil
}

// readScoped reads one frame of at most max bytes, reserving its length in
// scope before allocating it (released once read: the caller keeps what
// it decodes).
func readScoped(scope memScope, r *bufio.Reader, max int) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("frame length: %w", err)
	}
	if n > uint64(max) {
		return nil, badPeer("frame of %d bytes, limit %d", n, max)
	}
	if err := scope.ReserveMemory(int(n), network.ReservationPriorityHigh); err != nil {
		return nil, fmt.Errorf("evidence stream memory budget: %w", err)
	}
	defer scope.ReleaseMemory(int(n))
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("frame body: %w", err)
	}
	return b, nil
}
