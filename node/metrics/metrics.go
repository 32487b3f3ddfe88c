// Package metrics holds a node's Prometheus collectors, all named pog_*.
// Every label takes values from a fixed set (verdicts, reason classes,
// gossip topics and results, score parts), so a hostile peer cannot grow
// the series; the one exception, pog_miner_score's miner, holds only the
// miners this validator scored in its latest closed epoch, replaced at
// each close. A nil *Metrics ignores every call, so nodes without an API
// pay nothing.
package metrics

import (
	"strings"
	"time"

	"github.com/pog-network/pog/protocol/scoring"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is one node's collectors and the registry that serves them.
type Metrics struct {
	Registry *prometheus.Registry

	rounds        *prometheus.CounterVec
	roundSeconds  prometheus.Histogram
	tflops        prometheus.Histogram
	verifySeconds prometheus.Histogram
	gossip        *prometheus.CounterVec
	gossipDropped *prometheus.CounterVec
	epochClose    prometheus.Histogram
	epochRecords  prometheus.Counter
	ownWeight     prometheus.Gauge
	ownIncentive  prometheus.Gauge
	ownEpoch      prometheus.Gauge
	minerScore    *prometheus.GaugeVec
	scoreEpoch    prometheus.Gauge
}

// Gauges are read at scrape time; nil ones are not exported.
type Gauges struct {
	Peers      func() float64 // connected peers
	StoreBytes func() float64 // store size on disk
	Queue      func() float64 // miner: challenges waiting to be computed
	Held       func() float64 // miner: committed rounds held for tile requests
}

// New registers every collector on a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{Registry: r,
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pog_rounds_total",
			Help: "Rounds this validator finished, by verdict and reason class."}, []string{"verdict", "reason"}),
		roundSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pog_round_commit_seconds",
			Help: "Time from sending a challenge to receiving its commitment.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
		tflops: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pog_round_tflops",
			Help: "Measured throughput of verified rounds, TFLOPS.", Buckets: prometheus.ExponentialBuckets(1e-5, 4, 16)}),
		verifySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pog_round_verify_seconds",
			Help: "Time to fetch and verify a round's sampled tiles.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		gossip: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pog_gossip_messages_total",
			Help: "Gossip messages validated, by topic and result (accept, reject, ignore)."}, []string{"topic", "result"}),
		gossipDropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pog_gossip_dropped_total",
			Help: "Gossip lost without a verdict, by where: rpc_to_validator and rpc_to_other (an RPC to a peer dropped, its send queue full), slow_reader (this node's subscription missed a validated message), " +
				"not_validated (refused before validation: its queue full or throttled)."}, []string{"where"}),
		epochClose: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pog_epoch_close_seconds",
			Help: "Time this validator took to score an epoch and publish its record.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		epochRecords: prometheus.NewCounter(prometheus.CounterOpts{Name: "pog_epoch_records_total",
			Help: "Epoch records stored, this node's and other validators'."}),
		ownWeight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pog_own_weight",
			Help: "This node's consensus weight in the latest epoch with records."}),
		ownIncentive: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pog_own_incentive",
			Help: "This node's incentive share in the latest epoch with records."}),
		ownEpoch: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pog_own_weight_epoch",
			Help: "The epoch pog_own_weight and pog_own_incentive are from."}),
		minerScore: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pog_miner_score",
			Help: "Each miner's score in the latest epoch this validator closed, by part: total, gpu, cpu, ram, storage, " +
				"and the GPU part's throughput, memory and availability factors (pog explain has every term)."}, []string{"miner", "part"}),
		scoreEpoch: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pog_miner_score_epoch",
			Help: "The epoch pog_miner_score is from."}),
	}
	r.MustRegister(m.rounds, m.roundSeconds, m.tflops, m.verifySeconds, m.gossip, m.gossipDropped, m.epochClose, m.epochRecords,
		m.ownWeight, m.ownIncentive, m.ownEpoch, m.minerScore, m.scoreEpoch,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// AddGauges registers the gauges read at scrape time (once the node they
// read exists); call it once.
func (m *Metrics) AddGauges(g Gauges) {
	gauge := func(name, help string, f func() float64) {
		if f != nil {
			m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
		}
	}
	gauge("pog_peers", "Connected libp2p peers.", g.Peers)
	gauge("pog_store_bytes", "Size of the node's store on disk.", g.StoreBytes)
	gauge("pog_queue_length", "Challenges waiting in the miner's queue.", g.Queue)
	gauge("pog_miner_rounds_held", "Committed rounds whose tile chaining values the miner holds for their validator's tile "+
		"request: until its verdict, or miner.proof_window after the commitment.", g.Held)
}

// Round counts one finished round. reason is free text; only its class is
// a label.
func (m *Metrics) Round(verified bool, reason string, commit, verify time.Duration, tflops float64) {
	if m == nil {
		return
	}
	verdict := "failed"
	if verified {
		verdict = "verified"
		m.tflops.Observe(tflops)
	}
	m.rounds.WithLabelValues(verdict, ReasonClass(reason)).Inc()
	if commit > 0 {
		m.roundSeconds.Observe(commit.Seconds())
	}
	if verify > 0 {
		m.verifySeconds.Observe(verify.Seconds())
	}
}

// reasonClasses map a failure reason to its label by the first keyword it
// contains, in this order.
var reasonClasses = []struct{ keyword, class string }{
	{"shut down", "shutdown"},
	{"no commitment", "deadline"},
	{"deadline", "deadline"},
	{"tile request", "tiles"},
	{"root", "proof"},
	{"tile", "proof"},
	{"proof", "proof"},
	{"sizing", "challenge"},
	{"size a challenge", "challenge"},
	{"challenge", "challenge"},
	{"publish", "gossip"},
}

// ReasonClass is the bounded label for a round's reason: "" for a
// verified round, else one of the classes above or "other".
func ReasonClass(reason string) string {
	if reason == "" {
		return ""
	}
	r := strings.ToLower(reason)
	for _, c := range reasonClasses {
		if strings.Contains(r, c.keyword) {
			return c.class
		}
	}
	return "other"
}

// Gossip counts one validated message; topic is one of the node's fixed
// topics and result one of accept, reject, ignore.
func (m *Metrics) Gossip(topic, result string) {
	if m != nil {
		m.gossip.WithLabelValues(topic, result).Inc()
	}
}

// GossipDropped counts one message or RPC lost without a verdict; where
// is rpc_to_validator, rpc_to_other, slow_reader or not_validated.
func (m *Metrics) GossipDropped(where string) {
	if m != nil {
		m.gossipDropped.WithLabelValues(where).Inc()
	}
}

// EpochClosed records how long closing an epoch took.
func (m *Metrics) EpochClosed(d time.Duration) {
	if m != nil {
		m.epochClose.Observe(d.Seconds())
	}
}

// EpochRecord counts a stored epoch record.
func (m *Metrics) EpochRecord() {
	if m != nil {
		m.epochRecords.Inc()
	}
}

// Own sets this node's weight and incentive from epoch e's consensus.
func (m *Metrics) Own(e uint64, weight, incentive float64) {
	if m != nil {
		m.ownEpoch.Set(float64(e))
		m.ownWeight.Set(weight)
		m.ownIncentive.Set(incentive)
	}
}

// scoreParts are pog_miner_score's parts, each read from a score.
var scoreParts = []struct {
	name string
	of   func(scoring.Score) float64
}{
	{"total", func(s scoring.Score) float64 { return s.Total }},
	{"gpu", func(s scoring.Score) float64 { return s.GPU }},
	{"throughput", func(s scoring.Score) float64 { return s.Throughput }},
	{"memory", func(s scoring.Score) float64 { return s.Memory }},
	{"availability", func(s scoring.Score) float64 { return s.Availability }},
	{"cpu", func(s scoring.Score) float64 { return s.CPU }},
	{"ram", func(s scoring.Score) float64 { return s.RAM }},
	{"storage", func(s scoring.Score) float64 { return s.Storage }},
}

// EpochScores replaces pog_miner_score with epoch e's scores, so a miner
// not scored in e has no series left.
func (m *Metrics) EpochScores(e uint64, scores []scoring.Score) {
	if m == nil {
		return
	}
	m.minerScore.Reset()
	for _, s := range scores {
		for _, p := range scoreParts {
			m.minerScore.WithLabelValues(s.Miner, p.name).Set(p.of(s))
		}
	}
	m.scoreEpoch.Set(float64(e))
}

// RoundsCounter is the pog_rounds_total series for a verdict and reason
// class, for tests.
func (m *Metrics) RoundsCounter(verdict, reason string) prometheus.Counter {
	return m.rounds.WithLabelValues(verdict, reason)
}

// GossipDroppedCounter is the pog_gossip_dropped_total series for where,
// for tests.
func (m *Metrics) GossipDroppedCounter(where string) prometheus.Counter {
	return m.gossipDropped.WithLabelValues(where)
}
