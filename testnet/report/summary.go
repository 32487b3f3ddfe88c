// Package report owns a testnet run's outputs: the machine-readable
// summary.json, report.md and report.html for people, and PNG plots drawn
// with gonum/plot. It only formats; the testnet package decides what
// happened.
package report

import "strconv"

// Summary is everything a testnet run measured; summary.json is its JSON.
type Summary struct {
	Seed            int64   `json:"seed"`
	Validators      int     `json:"validators"`
	Miners          int     `json:"miners"`
	EpochLength     string  `json:"epoch_length"`
	DurationSeconds float64 `json:"duration_seconds"`
	// Simulated says the run was in virtual time (DurationSeconds of it);
	// WallSeconds is how long it took this machine.
	Simulated   bool    `json:"simulated,omitempty"`
	WallSeconds float64 `json:"wall_seconds,omitempty"`
	// StartedAt is when the run started (RFC 3339); AtSeconds count from it.
	StartedAt string `json:"started_at,omitempty"`
	// UpSeconds is when every node had started and every miner had
	// connected to its validators.
	UpSeconds float64 `json:"up_seconds"`
	// Scale is what simulated miners' TFLOPS are of their profile's.
	Scale float64 `json:"scale,omitempty"`
	// HostScale says how simulated hosts are scaled (RAM, storage, walks).
	HostScale string  `json:"host_scale,omitempty"`
	Nodes     []Node  `json:"nodes"`
	Epochs    []Epoch `json:"epochs"`
	// Rounds are every round verdict the validators recorded.
	Rounds     []Round     `json:"rounds"`
	Detections []Detection `json:"detections"`
	// FalsePositives are failed rounds or flags that hit honest miners.
	FalsePositives []Detection `json:"false_positives"`
	Gossip         Latency     `json:"gossip_latency"`
	// GossipDropped is gossip the nodes lost without a verdict, summed
	// over nodes, by where (node.GossipDrops; not in --procs runs).
	GossipDropped map[string]uint64 `json:"gossip_dropped,omitempty"`
	// Throughput and TimeSharing measure the distortions distance and time-sharing cause: every
	// miner's measured against true throughput, and what identities
	// sharing one device measure together (what they earn is their Profit).
	Throughput    []Throughput `json:"throughput,omitempty"`
	TimeSharing   []TimeShare  `json:"time_sharing,omitempty"`
	Profitability []Profit     `json:"profitability"`
	// JudgedByPay are the adversary classes not meant to be detected: they
	// compute honestly or are paid only for what they prove, so their
	// Profit, not a detection, judges them.
	JudgedByPay []string `json:"judged_by_pay,omitempty"`
	Checks      []Check  `json:"checks"`
	Passed      bool     `json:"passed"`
	// Settings compares the run's protocol settings with production.
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is one protocol setting in this run and in production, and the
// run's scale of it ("=" where they are equal).
type Setting struct {
	Name       string `json:"name"`
	Run        string `json:"run"`
	Production string `json:"production"`
	Scale      string `json:"scale"`
}

// Profit is the one gain figure of an adversary: every figure the checks
// and the report give for its earnings is this one. Incentive is its mean
// consensus incentive over the summarised epochs (a sybil, timeshare or
// cpu-outsource group's summed); HonestIncentive, the baseline, is the mean of the same
// over Honest, the undelayed honest miners of its real profile that no
// fault struck (scaled by its designed availability where it is only
// part-time up). Gain is Incentive ÷ HonestIncentive; over Limit it fails
// the run where Enforced.
type Profit struct {
	Adversary       string   `json:"adversary"`
	RealProfile     string   `json:"real_profile"`
	Incentive       float64  `json:"incentive"`
	HonestIncentive float64  `json:"honest_incentive"`
	Honest          []string `json:"honest_miners"`
	Gain            float64  `json:"gain"`
	Limit           float64  `json:"limit"`
	Enforced        bool     `json:"limit_enforced"`
}

// Over says whether the gain exceeds its limit, enforced or not.
func (p Profit) Over() bool { return p.Gain > p.Limit }

// GainText is how the checks and the report quote a gain: "1.061×".
func GainText(g float64) string { return strconv.FormatFloat(g, 'f', 3, 64) + "×" }

// Node is one testnet participant.
type Node struct {
	Name      string `json:"name"` // e.g. "miner-3"
	PeerID    string `json:"peer_id"`
	Role      string `json:"role"`                // miner or validator
	Profile   string `json:"profile,omitempty"`   // H200, H100, A100, RTX4090, CPU
	Adversary string `json:"adversary,omitempty"` // empty: honest
	// ProfileTFLOPS is the profile's fp16 figure (BRIEF §7 table) and
	// SimTFLOPS what the paced CPU backend is set to deliver.
	ProfileTFLOPS float64 `json:"profile_tflops,omitempty"`
	SimTFLOPS     float64 `json:"sim_tflops,omitempty"`
	// AddedLatencyMs delays every message to and from the miner, each way.
	AddedLatencyMs float64 `json:"added_latency_ms,omitempty"`
	// Loaded: a CPU job runs beside the miner for part of each epoch
	// (the loaded miner); honest, but no baseline for others.
	Loaded bool `json:"loaded,omitempty"`
	// StoreBytes is the size of its store's keys and values after the run.
	StoreBytes int64 `json:"store_bytes,omitempty"`
	// Presence is the absent adversary's share of its owned slots it
	// was connected for in the summarised epochs: the share it is owed.
	Presence float64 `json:"presence,omitempty"`
}

// Epoch is one closed epoch as the network saw it.
type Epoch struct {
	Epoch uint64 `json:"epoch"`
	// Scores and Weights are each validator's view: validator name → miner
	// name → value.
	Scores  map[string]map[string]float64 `json:"scores"`
	Weights map[string]map[string]float64 `json:"weights"`
	// Storage is each validator's storage part of each miner's score
	// (SPEC §18), by validator and miner name.
	Storage map[string]map[string]float64 `json:"storage,omitempty"`
	// Consensus and Incentive are by miner name; Trust by validator name.
	Consensus     map[string]float64 `json:"consensus"`
	Incentive     map[string]float64 `json:"incentive"`
	Trust         map[string]float64 `json:"trust"`
	ConsensusHash string             `json:"consensus_hash"`
	// Identical is whether every node computed ConsensusHash.
	Identical bool `json:"identical_on_all_nodes"`
	// Differs names each node that computed another hash, and why.
	Differs []string `json:"consensus_differs,omitempty"`
	// RecordSeconds is, by validator name, when the first and the last
	// node stored its record, in seconds of the run (not in --procs runs).
	RecordSeconds map[string][2]float64 `json:"record_seconds,omitempty"`
	// Lacking is, by validator name, how many nodes lacked its record
	// when the run summarised.
	Lacking map[string]int `json:"lacking_by_validator,omitempty"`
	// Verdicts counts rounds by miner name: verified and failed.
	Verdicts map[string]Verdicts `json:"verdicts"`
	// HostCPU is, by miner name, the CPU core·GHz its host rounds proved
	// (each validator's mean over its host records, averaged over
	// validators); summarised only with the cpu-outsource adversary.
	HostCPU map[string]float64 `json:"host_cpu,omitempty"`
	// HostRAM is, by miner name, the RAM bytes its host rounds were
	// credited, likewise; summarised only with the ram-rebuild adversary.
	HostRAM map[string]float64 `json:"host_ram,omitempty"`
	// Loaded is, by validator name, the loaded miner's CPU part against
	// its twin's; summarised only in simulated runs with the loaded
	// adversary under the slot schedule.
	Loaded map[string]LoadedCPU `json:"loaded,omitempty"`
}

// LoadedCPU is one validator's CPU part of the loaded miner and its twin
// in an epoch.
type LoadedCPU struct {
	Loaded float64 `json:"loaded_core_ghz"` // the loaded miner's proven CPU core·GHz
	Twin   float64 `json:"twin_core_ghz"`   // its twin's
	Clean  float64 `json:"clean"`           // the share of its host CPU proofs in this validator's host slots clear of the job
	Proofs int     `json:"proofs"`          // how many proofs those were
}

// Verdicts counts round outcomes.
type Verdicts struct {
	Verified int `json:"verified"`
	Failed   int `json:"failed"`
}

// Round is one round verdict.
type Round struct {
	Epoch     uint64  `json:"epoch"`
	Round     uint64  `json:"round"`
	Validator string  `json:"validator"`
	Miner     string  `json:"miner"`
	Verified  bool    `json:"verified"`
	Reason    string  `json:"reason,omitempty"`
	TFLOPS    float64 `json:"tflops"`
	// VerifyMS is the validator's check of the sampled tiles, its wait
	// for the CPU included (in virtual time, the charge of machine.CheckCPU).
	VerifyMS  float64 `json:"verify_ms,omitempty"`
	AtSeconds float64 `json:"at_seconds"` // since the run started
}

// Detection is when and how an adversary (or, as a false positive, an
// honest node) was caught.
type Detection struct {
	Adversary string  `json:"adversary"`
	Node      string  `json:"node"`
	Epoch     uint64  `json:"epoch"`
	Round     uint64  `json:"round,omitempty"`
	Kind      string  `json:"kind"` // failed-round, flag, peer-score, audit, clipped
	Detail    string  `json:"detail"`
	AtSeconds float64 `json:"at_seconds"`
}

// Latency is challenge gossip latency: publication at the validator to
// receipt at each other validator (miners take their challenges on the
// round stream and relay no round gossip), in milliseconds.
type Latency struct {
	Samples []float64 `json:"samples_ms"`
	P50     float64   `json:"p50_ms"`
	P90     float64   `json:"p90_ms"`
	P99     float64   `json:"p99_ms"`
}

// Check is one of the run's own expectations.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Throughput is one miner's measured throughput against the rate its
// simulated device delivers, and against an undelayed miner of its profile.
type Throughput struct {
	Node           string  `json:"node"`
	Profile        string  `json:"profile"`
	AddedLatencyMs float64 `json:"added_latency_ms"` // each way
	SimTFLOPS      float64 `json:"sim_tflops"`       // true throughput
	// MeasuredTFLOPS is the median over the validators' verified rounds.
	MeasuredTFLOPS float64 `json:"measured_tflops"`
	Rounds         int     `json:"verified_rounds"`
	Ratio          float64 `json:"measured_over_true"`
	// Reference is an undelayed honest miner of the same profile; Relative
	// is MeasuredTFLOPS over its MeasuredTFLOPS.
	Reference string  `json:"reference,omitempty"`
	Relative  float64 `json:"relative_to_reference,omitempty"`
	Incentive float64 `json:"mean_incentive"` // over the full epochs
	Penalties int     `json:"penalties"`      // its failed rounds and flags
}

// TimeShare is what a group of identities on one device measures
// together against one honest miner of its profile; what it earns is its
// Profit.
type TimeShare struct {
	Adversary string   `json:"adversary"`
	Members   []string `json:"members"`
	Profile   string   `json:"profile"`
	Reference string   `json:"reference,omitempty"`
	// ThroughputRatio is the members' summed median measured throughput
	// over the reference's: the time-sharing alone, without scoring.
	ThroughputRatio float64 `json:"throughput_ratio"`
	RoundInterval   string  `json:"round_interval"`
	// DutyCycle is the fraction of one identity's time under the
	// validators' rounds as configured: validators × validator.duty_cycle,
	// at most 1.
	DutyCycle float64 `json:"duty_cycle"`
}
