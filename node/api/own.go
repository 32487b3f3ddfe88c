package api

import (
	"net/http"
	"time"

	"github.com/pog-network/pog/node/miner"
)

// OwnRounds is /api/v1/own/rounds: what a miner knows of its own work, the
// results its validators sent and the host rounds it served, since it
// started (a miner keeps no round evidence; a validator's lists are empty).
type OwnRounds struct {
	Rounds     []PlayedRound     `json:"rounds"`
	HostRounds []PlayedHostRound `json:"host_rounds"`
}

// PlayedRound is a round this miner played, as its validator reported it.
type PlayedRound struct {
	Validator  string    `json:"validator"`
	Epoch      uint64    `json:"epoch"`
	Round      uint64    `json:"round"`
	Steps      int       `json:"steps"`
	Probe      bool      `json:"probe"`
	At         time.Time `json:"at"`
	Verdict    string    `json:"verdict"`
	Reason     string    `json:"reason,omitempty"`
	TFLOPS     float64   `json:"tflops"`
	PeakTFLOPS float64   `json:"peak_tflops"`
}

// PlayedHostRound is a host round a validator opened with this miner.
type PlayedHostRound struct {
	Validator string    `json:"validator"`
	At        time.Time `json:"at"`
	Kind      string    `json:"kind"`
	Chains    uint64    `json:"chains"`
	Steps     uint64    `json:"steps"`
	ProveMS   float64   `json:"prove_ms"`
	RootByMS  float64   `json:"root_by_ms"`
	Served    bool      `json:"served"`
	Error     string    `json:"error,omitempty"`
}

func (s *server) ownRounds(w http.ResponseWriter, _ *http.Request) {
	snap := s.o.Live.Snapshot()
	out := OwnRounds{Rounds: []PlayedRound{}, HostRounds: []PlayedHostRound{}}
	for _, r := range snap.Played {
		out.Rounds = append(out.Rounds, PlayedRound{Validator: r.Validator.String(), Epoch: r.Epoch, Round: r.Round, Steps: r.Steps,
			Probe: r.Probe, At: r.At.UTC(), Verdict: r.Verdict, Reason: r.Reason, TFLOPS: r.TFLOPS, PeakTFLOPS: r.Peak})
	}
	for _, h := range snap.HostPlayed {
		out.HostRounds = append(out.HostRounds, playedHost(h))
	}
	writeJSON(w, out)
}

func playedHost(h miner.PlayedHostRound) PlayedHostRound {
	return PlayedHostRound{Validator: h.Validator.String(), At: h.At.UTC(), Kind: h.Kind, Chains: h.Chains, Steps: h.Steps,
		ProveMS: ms(h.Prove), RootByMS: ms(h.RootBy), Served: h.Served, Error: h.Error}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
