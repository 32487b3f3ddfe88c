package api

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// Round is one stored round verdict (the rows of `pog rounds --json`).
type Round struct {
	Epoch     uint64  `json:"epoch"`
	Round     uint64  `json:"round"`
	Miner     string  `json:"miner"`
	Validator string  `json:"validator"`
	Verdict   string  `json:"verdict"`
	Reason    string  `json:"reason,omitempty"`
	TFLOPS    float64 `json:"tflops"`
	CommitMS  float64 `json:"commit_ms"`
	VerifyMS  float64 `json:"verify_ms"`
	Samples   int     `json:"samples"`
	Secret    string  `json:"secret"`
	SentMS    int64   `json:"sent_unix_ms"`
}

// RoundOf maps a stored record to its API row.
func RoundOf(r *store.RoundRecord) Round {
	return Round{Epoch: r.Epoch, Round: r.Round, Miner: peer.ID(r.Miner).String(), Validator: peer.ID(r.Validator).String(),
		Verdict: r.Verdict.String(), Reason: r.Reason, TFLOPS: r.TFLOPS, CommitMS: float64(r.CommitNanos) / 1e6,
		VerifyMS: float64(r.VerifyNanos) / 1e6, Samples: len(r.Indices), Secret: hex.EncodeToString(r.Secret[:]),
		SentMS: r.SentUnixNano / 1e6}
}

// Status is /api/v1/status.
type Status struct {
	PeerID      string          `json:"peer_id"`
	Role        string          `json:"role"`
	Version     string          `json:"version"`
	Started     time.Time       `json:"started"`
	UptimeS     float64         `json:"uptime_s"`
	Epoch       uint64          `json:"epoch"`
	EpochEnd    time.Time       `json:"epoch_end"`
	Listen      []string        `json:"listen"`
	Peers       []Peer          `json:"peers"`
	Validators  []Validator     `json:"validators"`
	QueueLength int             `json:"queue_length"`
	Own         *node.OwnWeight `json:"own_weight"`
	Warnings    []string        `json:"warnings"`
	LastRounds  []Round         `json:"last_rounds"`
	Challenges  []Challenge     `json:"challenges"`
}

// Challenge is one challenge a miner received.
type Challenge struct {
	Validator string    `json:"validator"`
	Epoch     uint64    `json:"epoch"`
	Round     uint64    `json:"round"`
	Received  time.Time `json:"received"`
}

// Peer is a connected peer.
type Peer struct {
	ID        string  `json:"id"`
	Addr      string  `json:"addr"`
	Score     float64 `json:"score"`
	Validator bool    `json:"validator"`
}

// Validator is a validator this node has heard from.
type Validator struct {
	ID        string    `json:"id"`
	LastSeen  time.Time `json:"last_seen"`
	Connected bool      `json:"connected"`
}

// lastRounds is how many recent rounds the status carries, from at most
// statusEpochs epochs back.
const (
	lastRounds   = 10
	statusEpochs = 16
)

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	snap := s.o.Live.Snapshot()
	st := Status{PeerID: snap.ID.String(), Role: string(snap.Role), Version: s.o.Version, Started: snap.Started.UTC(),
		UptimeS: time.Since(snap.Started).Seconds(), Epoch: snap.Epoch, EpochEnd: snap.EpochEnd.UTC(), Listen: snap.Listen,
		Peers: []Peer{}, Validators: []Validator{}, QueueLength: snap.Queue, Own: snap.Own, Warnings: snap.Warnings,
		Challenges: []Challenge{}}
	for _, c := range snap.Challenges {
		st.Challenges = append(st.Challenges, Challenge{Validator: c.Validator.String(), Epoch: c.Epoch, Round: c.Round, Received: c.At.UTC()})
	}
	if st.Listen == nil {
		st.Listen = []string{}
	}
	if st.Warnings == nil {
		st.Warnings = []string{}
	}
	for _, p := range snap.Peers {
		st.Peers = append(st.Peers, Peer{ID: p.ID.String(), Addr: p.Addr, Score: p.Score, Validator: p.Validator})
	}
	for _, v := range snap.Validators {
		st.Validators = append(st.Validators, Validator{ID: v.ID.String(), LastSeen: v.LastSeen.UTC(), Connected: v.Connected})
	}
	// Chained rounds come at random times (duty cycle), so a short epoch
	// may hold none: look back statusEpochs epochs.
	from := snap.Epoch - min(snap.Epoch, statusEpochs)
	rounds, err := latestRounds(s.o.Store, from, lastRounds)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	st.LastRounds = rounds
	writeJSON(w, st)
}

// Round listing bounds.
const (
	defaultRounds = 500
	maxRounds     = 5000
)

// rounds: ?epoch=E for one epoch, or ?since=E for E onwards; the latest
// ?limit= rows (default 500) either way.
func (s *server) rounds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), defaultRounds, 1, maxRounds)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("limit: %w", err))
		return
	}
	from, to := uint64(0), ^uint64(0)
	if v := q.Get("epoch"); v != "" {
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("epoch: %w", err))
			return
		}
		to = from
	} else if v := q.Get("since"); v != "" {
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since: %w", err))
			return
		}
	}
	rows, err := roundsIn(s.o.Store, from, to, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, rows)
}

func latestRounds(st *store.Store, from uint64, n int) ([]Round, error) {
	return roundsIn(st, from, ^uint64(0), n)
}

// roundsIn returns the last n rounds of epochs from..to, oldest first.
func roundsIn(st *store.Store, from, to uint64, n int) ([]Round, error) {
	ring := make([]Round, 0, n)
	next := 0
	for rec, err := range st.Rounds(from, to) {
		if err != nil {
			return nil, err
		}
		if len(ring) < n {
			ring = append(ring, RoundOf(rec))
			continue
		}
		ring[next] = RoundOf(rec)
		next = (next + 1) % n
	}
	return append(ring[next:], ring[:next]...), nil
}

// Epoch is one stored epoch record (the rows of `pog epochs --json`).
type Epoch struct {
	Epoch     uint64 `json:"epoch"`
	Validator string `json:"validator"`
	Miners    int    `json:"miners"`
	ID        string `json:"id"`
	Prev      string `json:"prev"`
	Rounds    string `json:"rounds_root"`
}

func (s *server) epochs(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r.URL.Query().Get("limit"), defaultRounds, 1, maxRounds)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("limit: %w", err))
		return
	}
	rows := []Epoch{}
	for ent, err := range s.o.Store.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		o, err := protocol.Open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			writeError(w, http.StatusInternalServerError, fmt.Errorf("record %d of %s: %v (run pog audit)", ent.Epoch, peer.ID(ent.Validator), err))
			return
		}
		rec, id := o.Msg.(*pb.EpochRecord), protocol.ID(o.Body)
		rows = append(rows, Epoch{Epoch: ent.Epoch, Validator: o.Author.String(), Miners: len(rec.Weights),
			ID: hex.EncodeToString(id[:]), Prev: hex.EncodeToString(rec.PrevRecordHash), Rounds: hex.EncodeToString(rec.RoundsRoot)})
		if len(rows) > limit {
			rows = rows[1:]
		}
	}
	writeJSON(w, rows)
}

// Weights is an epoch's consensus (the output of `pog weights --json`).
type Weights struct {
	Epoch     uint64             `json:"epoch"`
	Hash      string             `json:"consensus_hash"`
	Miners    []MinerWeight      `json:"miners"`
	Trust     map[string]float64 `json:"validator_trust"`
	Dividends map[string]float64 `json:"validator_dividends"`
}

// MinerWeight is one miner's consensus weight and each validator's.
type MinerWeight struct {
	Miner      string             `json:"miner"`
	Consensus  float64            `json:"consensus"`
	Incentive  float64            `json:"incentive"`
	Validators map[string]float64 `json:"validators"`
}

// errNotFound marks answers that are 404s.
var errNotFound = errors.New("not found")

func (s *server) weights(w http.ResponseWriter, r *http.Request) {
	var e uint64
	var err error
	if v := r.URL.Query().Get("epoch"); v != "" {
		if e, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("epoch: %w", err))
			return
		}
	} else if e, err = latestEpoch(s.o.Store); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	out, err := EpochWeights(s.o.Store, e, s.o.Stakes)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, out)
}

func latestEpoch(st *store.Store) (uint64, error) {
	var e uint64
	found := false
	for ent, err := range st.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			return 0, err
		}
		e, found = ent.Epoch, true
	}
	if !found {
		return 0, fmt.Errorf("%w: no epoch records yet", errNotFound)
	}
	return e, nil
}

// EpochWeights computes epoch e's consensus from st as `pog weights` does,
// with each validator's weight of each miner.
func EpochWeights(st *store.Store, e uint64, stakes map[string]float64) (*Weights, error) {
	res, err := epoch.Consensus(st, e, stakes, consensus.DefaultParams())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotFound, err)
	}
	h := res.Hash()
	out := &Weights{Epoch: e, Hash: hex.EncodeToString(h[:]), Miners: []MinerWeight{}, Trust: map[string]float64{}, Dividends: map[string]float64{}}
	per, err := epoch.RecordWeights(st, e)
	if err != nil {
		return nil, err
	}
	for j, m := range res.Miners {
		out.Miners = append(out.Miners, MinerWeight{Miner: m, Consensus: res.Consensus[j], Incentive: res.Incentive[j], Validators: per[m]})
	}
	for i, v := range res.Validators {
		out.Trust[v], out.Dividends[v] = res.Trust[i], res.Dividends[i]
	}
	return out, nil
}

// EpochConsensus is one epoch's consensus weight per miner.
type EpochConsensus struct {
	Epoch  uint64             `json:"epoch"`
	Miners map[string]float64 `json:"miners"`
}

// weightsHistory: each epoch's consensus weights in one pass over the
// records, the last ?last= epochs (default 50).
func (s *server) weightsHistory(w http.ResponseWriter, r *http.Request) {
	last, err := intParam(r.URL.Query().Get("last"), 50, 1, 1000)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("last: %w", err))
		return
	}
	out := []EpochConsensus{}
	upto, err := latestEpoch(s.o.Store)
	if errors.Is(err, errNotFound) {
		writeJSON(w, out)
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	err = epoch.ConsensusEpochs(s.o.Store, upto, s.o.Stakes, consensus.DefaultParams(), func(e uint64, res *consensus.Result) error {
		ec := EpochConsensus{Epoch: e, Miners: map[string]float64{}}
		for j, m := range res.Miners {
			ec.Miners[m] = res.Consensus[j]
		}
		out = append(out, ec)
		if len(out) > last {
			out = out[1:]
		}
		return nil
	})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, out)
}

// Price is one miner's price (the rows of `pog pricing --json`).
type Price struct {
	Miner       string   `json:"miner"`
	Epoch       uint64   `json:"epoch"`
	GPUs        int      `json:"gpus"`
	FP16TFLOPS  float64  `json:"fp16_sustained_tflops"`
	PricePerGPU float64  `json:"usd_per_gpu_hour"`
	Total       float64  `json:"score"`
	Flags       []string `json:"flags,omitempty"`
}

func (s *server) pricing(w http.ResponseWriter, r *http.Request) {
	u := 0.7
	if v := r.URL.Query().Get("utilisation"); v != "" {
		var err error
		if u, err = strconv.ParseFloat(v, 64); err != nil || !(u >= 0 && u <= 1) {
			writeError(w, http.StatusBadRequest, errors.New("utilisation: want a number in [0, 1]"))
			return
		}
	}
	rows, err := epoch.Pricing(s.o.Store, scoring.DefaultConfig(), u)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	out := []Price{}
	for _, r := range rows {
		out = append(out, Price{Miner: r.Miner, Epoch: r.Epoch, GPUs: r.GPUs, FP16TFLOPS: r.Score.FP16Sustained, PricePerGPU: r.Price, Total: r.Score.Total, Flags: r.Score.Flags})
	}
	writeJSON(w, out)
}

// scores: every miner's score breakdown in ?epoch=E (default: the latest
// with round evidence) of this validator's evidence, as `pog explain --json`.
func (s *server) scores(w http.ResponseWriter, r *http.Request) {
	if out, _, ok := s.explain(w, r); ok {
		writeJSON(w, out)
	}
}

// minerScore: one miner's score breakdown, as `pog explain --miner ID --json`.
func (s *server) minerScore(w http.ResponseWriter, r *http.Request) {
	id, err := peer.Decode(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("miner: %w", err))
		return
	}
	out, e, ok := s.explain(w, r)
	if !ok {
		return
	}
	for _, m := range out {
		if m.Miner == id.String() {
			writeJSON(w, m)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("miner %s has no score in epoch %d of this node's round evidence", id, e))
}

// explain computes the breakdowns of the epoch asked for, or answers the
// error and reports false.
func (s *server) explain(w http.ResponseWriter, r *http.Request) ([]epoch.MinerScore, uint64, bool) {
	var e *uint64
	if v := r.URL.Query().Get("epoch"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("epoch: %w", err))
			return nil, 0, false
		}
		e = &n
	}
	out, ep, err := epoch.Explain(s.o.Store, scoring.DefaultConfig(), e)
	if errors.Is(err, epoch.ErrNoStoredEvidence) {
		writeError(w, http.StatusNotFound, err)
		return nil, 0, false
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return nil, 0, false
	}
	return out, ep, true
}

// HardwareSummary is what a miner announces about its machine.
type HardwareSummary struct {
	Role         string  `json:"role"`
	Announced    bool    `json:"announced"`
	CPUCores     uint32  `json:"cpu_cores"`
	CPUGHz       float64 `json:"cpu_ghz"`
	RAMBytes     uint64  `json:"ram_bytes"`
	RAMGBps      float64 `json:"ram_gbps"`
	StorageBytes uint64  `json:"storage_bytes"`
	StorageMBps  float64 `json:"storage_mbps"`
	GPUs         []GPU   `json:"gpus"`
}

// GPU is one announced GPU.
type GPU struct {
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	MemoryBytes uint64 `json:"memory_bytes"`
}

func (s *server) hw(w http.ResponseWriter, r *http.Request) {
	snap := s.o.Live.Snapshot()
	out := HardwareSummary{Role: string(snap.Role), GPUs: []GPU{}}
	if h := snap.Hardware; h != nil {
		out.Announced = true
		out.CPUCores, out.CPUGHz, out.RAMBytes, out.RAMGBps = h.CpuCores, h.CpuGhz, h.RamBytes, h.RamGbps
		out.StorageBytes, out.StorageMBps = h.StorageBytes, h.StorageMbps
	}
	for _, g := range snap.GPUs {
		out.GPUs = append(out.GPUs, GPU{Name: g.Name, UUID: g.Uuid, MemoryBytes: g.MemoryBytes})
	}
	writeJSON(w, out)
}

func intParam(v string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want an integer in [%d, %d]", lo, hi)
	}
	return n, nil
}

func statusOf(err error) int {
	if errors.Is(err, errNotFound) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// Error is every non-2xx answer's body.
type Error struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(Error{err.Error()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
