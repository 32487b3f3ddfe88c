package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host/memwalk"
	"github.com/pog-network/pog/proof/host/plot"
)

// Files under a node's home directory.
const (
	ConfigFile = "config.toml"
	KeyFile    = "node.key"
	StoreDir   = "store"
)

// Duration is a time.Duration written as "30s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	d.Duration = v
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Config is a node's configuration file, config.toml in its home.
type Config struct {
	Node      NodeConfig      `toml:"node"`
	Network   NetworkConfig   `toml:"network"`
	Miner     MinerConfig     `toml:"miner"`
	Validator ValidatorConfig `toml:"validator"`
}

// NodeConfig is the libp2p host.
type NodeConfig struct {
	Listen    []string `toml:"listen" comment:"multiaddrs to listen on (TCP and QUIC)"`
	Bootstrap []string `toml:"bootstrap" comment:"peers to dial at start, as /ip4/.../p2p/<id>"`
	MDNS      bool     `toml:"mdns" comment:"discover peers on the LAN with mDNS"`
	DHT       bool     `toml:"dht" comment:"run a kad-dht under the /pog prefix (never the public IPFS DHT)"`
	LowWater  int      `toml:"conn_low_water" comment:"connection manager: trim down to this many connections (a validator keeps at least max_miners + validators + 64)"`
	HighWater int      `toml:"conn_high_water" comment:"connection manager: start trimming above this many"`
	// ProofStreamMemory bounds the memory all proof streams may hold.
	ProofStreamMemory int64  `toml:"proof_stream_memory" comment:"bytes all /pog/proof streams may buffer at once"`
	LogLevel          string `toml:"log_level" comment:"debug, info, warn or error"`
	LogFormat         string `toml:"log_format" comment:"text or json"`
	API               string `toml:"api" comment:"local HTTP API, metrics and dashboard address, e.g. 127.0.0.1:9090 (empty: off)"`
	APITokenFile      string `toml:"api_token_file" comment:"bearer token file (relative to the home) required for a non-loopback api address"`
	PeerID            string `toml:"peer_id" comment:"this node's peer ID, written by pog init: node.key must match it"`
	// RetainEvidence is how many epochs after finality round evidence is kept.
	RetainEvidence int `toml:"retain_evidence_epochs" comment:"epochs after finality to keep round evidence and announces before pruning (-1: forever); epoch records are kept forever"`
}

// NetworkConfig is what all nodes of one network agree on.
type NetworkConfig struct {
	Validators        []string `toml:"validators" comment:"peer IDs allowed to send challenges"`
	TrustAnyValidator bool     `toml:"trust_any_validator" comment:"accept challenges from any peer (local testing only)"`
	EpochLength       Duration `toml:"epoch_length" comment:"epoch = unix time / epoch_length"`
	Genesis           string   `toml:"genesis" comment:"genesis file (relative to the home) listing validators and their stakes; empty: equal stakes"`
	FinalityEpochs    uint64   `toml:"finality_epochs" comment:"epoch e's consensus is final at the end of epoch e + finality_epochs; later records for e are stored but ignored (1..1000)"`
	RAMPeriodEpochs   uint64   `toml:"ram_period_epochs" comment:"the RAM host proof's dataset changes every this many epochs; miners rebuild theirs then"`
	RAMCacheLog       uint32   `toml:"ram_cache_log" comment:"the RAM proof's light cache holds 2^ram_cache_log 64-byte lines (validators hold it)"`
	RAMItemRounds     uint32   `toml:"ram_item_rounds" comment:"dependent cache reads per RAM dataset item (its recomputation cost)"`
	PlotBlockLog      uint32   `toml:"plot_block_log" comment:"plot blocks are 2^plot_block_log bytes"`
	PlotRounds        uint32   `toml:"plot_rounds" comment:"layers of 64-byte labels per plot block (a block's regeneration cost)"`
}

// Genesis is a network's validator set with stakes, read from the file
// network.genesis names:
//
//	[[validator]]
//	id = "12D3KooW…"
//	stake = 1000.0
type Genesis struct {
	Validators []GenesisValidator `toml:"validator"`
}

// GenesisValidator is one staked validator.
type GenesisValidator struct {
	ID    string  `toml:"id"`
	Stake float64 `toml:"stake"`
}

// LoadGenesis reads the genesis file named by c (nil stakes if none is
// configured) and returns validator stakes by peer ID. Its errors are
// *Error values: the file is part of the node's settings.
func LoadGenesis(home string, c Config) (map[string]float64, error) {
	if c.Network.Genesis == "" {
		return nil, nil
	}
	path := c.Network.Genesis
	if !filepath.IsAbs(path) {
		path = filepath.Join(home, path)
	}
	stakes, err := readGenesis(path)
	if err != nil {
		return nil, &Error{fmt.Errorf("genesis %s (network.genesis): %w", path, err)}
	}
	return stakes, nil
}

func readGenesis(path string) (map[string]float64, error) {
	var g Genesis
	md, err := toml.DecodeFile(path, &g)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("unknown setting %q", und[0].String())
	}
	return g.Stakes()
}

// Stakes checks the validators (decodable IDs, positive stakes, no
// duplicates, at least one) and returns their stakes by peer ID.
func (g Genesis) Stakes() (map[string]float64, error) {
	stakes := map[string]float64{}
	for i, v := range g.Validators {
		id, err := peer.Decode(v.ID)
		if err != nil {
			return nil, fmt.Errorf("validator %d: %w", i, err)
		}
		if !(v.Stake > 0) || v.Stake > 1e18 {
			return nil, fmt.Errorf("validator %s: stake %v must be positive", v.ID, v.Stake)
		}
		if _, dup := stakes[id.String()]; dup {
			return nil, fmt.Errorf("validator %s listed twice", v.ID)
		}
		stakes[id.String()] = v.Stake
	}
	if len(stakes) == 0 {
		return nil, errors.New("no validators")
	}
	return stakes, nil
}

// MinerConfig is the miner role.
type MinerConfig struct {
	Backend          string   `toml:"backend" comment:"compute backend: cpu (or cuda in GPU builds)"`
	Workers          int      `toml:"workers" comment:"host threads for the cpu backend (0: all)"`
	MaxOutputBytes   uint64   `toml:"max_output_bytes" comment:"largest challenge output accepted per GPU"`
	AnnounceInterval Duration `toml:"announce_interval" comment:"how often the miner gossips its inventory and capacity"`
	QueueLength      int      `toml:"queue_length" comment:"rounds served at once (one per validator); more are refused"`
	ProofWindow      Duration `toml:"proof_window" comment:"how long outputs are kept for tile requests after the commitment, unless the validator gives its verdict sooner"`
	MeasureHardware  bool     `toml:"measure_hardware" comment:"measure CPU, RAM and storage at start (cached a day in hw.json) and announce them (self-measured, not scored)"`
	RAMBytes         uint64   `toml:"ram_bytes" comment:"RAM held as the RAM host proof's dataset, in whole 64-byte items (0: none, and RAM earns nothing)"`
	PlotBytes        uint64   `toml:"plot_bytes" comment:"storage held as a plot for the storage host proof, in whole blocks (0: none, and storage earns nothing)"`
	PlotPath         string   `toml:"plot_path" comment:"the plot file (relative to the home), built at first start"`
}

// ValidatorConfig is the validator role.
type ValidatorConfig struct {
	RoundInterval     Duration `toml:"round_interval" comment:"how often the validator looks for miners due a round"`
	DutyCycle         float64  `toml:"duty_cycle" comment:"with a validator set (genesis or network.validators): share of each miner's slots under some validator's round, all validators alike (a device shared by several identities gains at most 1/duty_cycle); without one: this validator's share, at random times"`
	RoundTarget       Duration `toml:"round_target" comment:"round length for a GPU miner (at least min_rtt_multiple round trips)"`
	RoundTargetCPU    Duration `toml:"round_target_cpu" comment:"round length for a CPU-only miner"`
	MinSteps          int      `toml:"min_steps" comment:"fewest chained steps per round: bursting gains at most 1/(steps-2)"`
	MaxSteps          int      `toml:"max_steps" comment:"most chained steps per round"`
	MinRTTMultiple    float64  `toml:"min_rtt_multiple" comment:"a round lasts at least this many measured round trips"`
	FirstRootSlack    Duration `toml:"first_root_slack" comment:"slack beyond two steps and a round trip for the first root"`
	RoundOffset       Duration `toml:"round_offset" comment:"delay before the first round: validators spread over the interval do not queue behind each other at a miner"`
	Size              uint32   `toml:"size" comment:"largest output edge M = N challenged"`
	K                 uint32   `toml:"k" comment:"inner dimension (capped by the precision's exactness limit)"`
	TileBytes         int      `toml:"tile_bytes" comment:"output tile size: 4·t² for a power-of-two t in [16, 512]"`
	Deadline          Duration `toml:"deadline" comment:"time from sending a challenge to receiving the commitment"`
	ProofTimeout      Duration `toml:"proof_timeout" comment:"time to fetch the sampled tiles"`
	DetectFraction    float64  `toml:"detect_fraction" comment:"catch a miner faking at least this fraction of tiles..."`
	DetectProbability float64  `toml:"detect_probability" comment:"...with at least this probability (sets the sample size)"`
	MinerTTL          Duration `toml:"miner_ttl" comment:"forget miners not announced for this long"`
	HostCPUWindow     Duration `toml:"host_cpu_window" comment:"the window every CPU host round runs to, the same for the whole network: a miner runs its chains this long and is credited its steps over at least this long (0: no CPU host rounds, and no CPU part is proven)"`
	HostCPUScaleLog   uint8    `toml:"host_cpu_scale_log" comment:"a CPU host round's step counts as 2^this steps: 0, except in the simulation, whose hosts take that many times a step's time"`
	HostCPUMaxChains  int      `toml:"host_cpu_max_chains" comment:"most chains of a CPU host round (one per announced core up to this)"`
	HostRAMSteps      uint64   `toml:"host_ram_steps" comment:"steps per walk of the RAM host round each miner with a dataset gets once per epoch, a power of two (0: none, and no RAM is proven)"`
	HostRAMMaxWalks   int      `toml:"host_ram_max_walks" comment:"most walks of a RAM host round (one per announced core up to this)"`
	HostPlotSteps     uint64   `toml:"host_plot_steps" comment:"steps per walk of the storage host round each miner with a plot gets once per epoch, a multiple of 4 (0: none, and no storage is proven)"`
	HostPlotMaxWalks  int      `toml:"host_plot_max_walks" comment:"most walks of a storage host round (one per announced core up to this)"`
	HostMaxRound      Duration `toml:"host_max_round" comment:"a distant miner's host rounds grow to 20 round trips, at most this long at its last measured step time"`
	HostRounds        int      `toml:"host_rounds" comment:"without a validator set (local testing): sets of host rounds per miner per epoch, at random times; the mean of each kind counts"`
	HostSlotShare     float64  `toml:"host_slot_share" comment:"with a validator set: share of round_target slots that are host slots, drawn without the miner, in which one validator plays every miner's host set; the mean of each kind counts"`
	MaxMiners         int      `toml:"max_miners" comment:"most miners this validator schedules at once (its verification capacity); beyond it the lowest ranked get no slots: weighed in its last record first, then verified, then connected, then by a seeded hash"`
}

// Profiles name default configurations for `pog init --profile`.
var Profiles = map[string]func() Config{
	"default": DefaultConfig,
	"local":   LocalConfig,
}

// DefaultConfig suits a node on a real network.
func DefaultConfig() Config {
	return Config{
		Node: NodeConfig{
			Listen:   []string{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"},
			LowWater: 100, HighWater: 400,
			ProofStreamMemory: 512 << 20,
			LogLevel:          "info", LogFormat: "text",
			RetainEvidence: 4,
		},
		Network: NetworkConfig{EpochLength: Duration{72 * time.Minute}, FinalityEpochs: 2,
			RAMPeriodEpochs: 20, RAMCacheLog: memwalk.DefaultCacheLog, RAMItemRounds: memwalk.DefaultRounds,
			PlotBlockLog: plot.DefaultBlockLog, PlotRounds: plot.DefaultRounds},
		Miner: MinerConfig{Backend: "cpu", MaxOutputBytes: 16 << 30, AnnounceInterval: Duration{time.Minute},
			QueueLength: 4, ProofWindow: Duration{2 * time.Minute}, MeasureHardware: true, PlotPath: "plot/plot.bin"},
		Validator: ValidatorConfig{RoundInterval: Duration{time.Second}, DutyCycle: 0.95,
			RoundTarget: Duration{10 * time.Second}, RoundTargetCPU: Duration{2 * time.Second}, MinSteps: 22, MaxSteps: 64,
			MinRTTMultiple: 20, FirstRootSlack: Duration{500 * time.Millisecond},
			Size: 16384, K: 8192, TileBytes: 64 << 10,
			Deadline: Duration{2 * time.Minute}, ProofTimeout: Duration{time.Minute},
			DetectFraction: 0.10, DetectProbability: 0.999, MinerTTL: Duration{10 * time.Minute},
			HostCPUWindow: Duration{2 * time.Second}, HostCPUMaxChains: MaxHostChains,
			HostRAMSteps: 1 << 20, HostRAMMaxWalks: 16, HostPlotSteps: 1 << 11, HostPlotMaxWalks: 8,
			HostMaxRound: Duration{10 * time.Second}, HostRounds: 3, HostSlotShare: 0.125, MaxMiners: 1024},
	}
}

// LocalConfig runs small challenges every few seconds on 127.0.0.1, for
// local testnets and tests.
func LocalConfig() Config {
	c := DefaultConfig()
	c.Node.Listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	c.Node.ProofStreamMemory = 64 << 20
	c.Network.TrustAnyValidator = true
	c.Network.EpochLength = Duration{time.Minute}
	c.Miner.MaxOutputBytes = 4 << 20
	c.Miner.AnnounceInterval = Duration{2 * time.Second}
	c.Miner.ProofWindow = Duration{20 * time.Second}
	c.Miner.MeasureHardware = false // local runs share one machine: nothing to tell apart
	c.Validator.RoundInterval = Duration{250 * time.Millisecond}
	// Without a validator set each validator pauses at random: half the
	// time under each one's rounds keeps a local machine responsive.
	c.Validator.DutyCycle = 0.5
	// Steps of about 90 ms: long against per-step overheads on a loaded
	// machine, short enough for several rounds per local epoch.
	c.Validator.RoundTarget, c.Validator.RoundTargetCPU = Duration{2 * time.Second}, Duration{2 * time.Second}
	c.Validator.MaxSteps = c.Validator.MinSteps
	c.Validator.FirstRootSlack = Duration{time.Second}
	c.Validator.Size, c.Validator.K, c.Validator.TileBytes = 256, 256, 16<<10
	c.Validator.Deadline = Duration{5 * time.Second}
	c.Validator.ProofTimeout = Duration{5 * time.Second}
	c.Validator.MinerTTL = Duration{10 * time.Second}
	c.Validator.HostCPUWindow = Duration{200 * time.Millisecond}
	// A 256 KiB light cache: every local node shares one (ramCaches).
	c.Network.RAMCacheLog = 12
	c.Network.RAMPeriodEpochs = 1 << 20
	c.Validator.HostRAMSteps, c.Validator.HostPlotSteps = 1<<14, 1<<8
	return c
}

// Error is an error in a node's settings: a bad or unknown setting,
// a config.toml that does not parse, a home without one. Retrying cannot
// cure it, so pog exits 2 on it (and systemd does not restart the node).
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Origins maps each setting given explicitly (miner.queue_length) to where
// its value came from: "config PATH", "environment POG_…" or "flag --…",
// a later source replacing an earlier one as its value does. Settings not
// in it hold their defaults.
type Origins map[string]string

// of names where keys were given: their distinct origins, or "default".
func (o Origins) of(keys []string) string {
	var srcs []string
	for _, k := range keys {
		if s, ok := o[k]; ok && !slices.Contains(srcs, s) {
			srcs = append(srcs, s)
		}
	}
	if len(srcs) == 0 {
		return "default"
	}
	return strings.Join(srcs, " and ")
}

// settingError is a bad value of keys (section.key): one setting, or both
// sides of a relation between two.
type settingError struct {
	keys []string
	msg  string
}

func (e settingError) Error() string { return e.msg }

// Validate checks the configuration and names every bad setting.
func (c *Config) Validate() error {
	var errs []error
	for _, p := range c.problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Check is Validate naming, with each bad setting, where it was given, so
// that an environment variable or a flag is not blamed on config.toml. Its
// error is a *Error.
func (c *Config) Check(o Origins) error {
	var errs []error
	for _, p := range c.problems() {
		errs = append(errs, fmt.Errorf("%s: %w", o.of(p.keys), p))
	}
	if len(errs) == 0 {
		return nil
	}
	return &Error{errors.Join(errs...)}
}

// problems are c's bad settings, each message starting with its first key.
func (c *Config) problems() []settingError {
	var errs []settingError
	relation := func(keys []string, format string, args ...any) {
		errs = append(errs, settingError{keys, keys[0] + " " + fmt.Sprintf(format, args...)})
	}
	bad := func(key, format string, args ...any) { relation([]string{key}, format, args...) }
	for _, a := range c.Node.Listen {
		if _, err := ma.NewMultiaddr(a); err != nil {
			bad("node.listen", "%q: %v", a, err)
		}
	}
	for _, a := range c.Node.Bootstrap {
		if _, err := peer.AddrInfoFromString(a); err != nil {
			bad("node.bootstrap", "%q: want a multiaddr ending in /p2p/<peer id>: %v", a, err)
		}
	}
	errs = append(errs, c.checkRanges()...)
	if c.Node.HighWater < c.Node.LowWater {
		relation([]string{"node.conn_low_water", "node.conn_high_water"}, "%d and conn_high_water %d: want low <= high", c.Node.LowWater, c.Node.HighWater)
	}
	if c.Node.PeerID != "" {
		if _, err := peer.Decode(c.Node.PeerID); err != nil {
			bad("node.peer_id", "%q: %v", c.Node.PeerID, err)
		}
	}
	switch c.Node.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("node.log_level", "%q: want debug, info, warn or error", c.Node.LogLevel)
	}
	if c.Node.LogFormat != "text" && c.Node.LogFormat != "json" {
		bad("node.log_format", "%q: want text or json", c.Node.LogFormat)
	}
	for _, v := range c.Network.Validators {
		if _, err := peer.Decode(v); err != nil {
			bad("network.validators", "%q: %v", v, err)
		}
	}
	if !knownBackend(c.Miner.Backend) {
		bad("miner.backend", "%q: want one of %v", c.Miner.Backend, backendNames())
	}
	v := c.Validator
	if err := commit.CheckTileBytes(v.TileBytes); err != nil || !isSquareTile(v.TileBytes) {
		bad("validator.tile_bytes", "%d: want 4·t² for t a power of two in [16, 512]", v.TileBytes)
	}
	if v.MaxSteps < v.MinSteps {
		relation([]string{"validator.max_steps", "validator.min_steps"}, "%d < validator.min_steps %d", v.MaxSteps, v.MinSteps)
	}
	if v.HostCPUWindow.Duration%time.Millisecond != 0 {
		bad("validator.host_cpu_window", "%v: want whole milliseconds", v.HostCPUWindow)
	}
	if v.HostRAMSteps&(v.HostRAMSteps-1) != 0 {
		bad("validator.host_ram_steps", "%d: want a power of two", v.HostRAMSteps)
	}
	if v.HostPlotSteps%PlotSegment != 0 {
		bad("validator.host_plot_steps", "%d: want a multiple of %d", v.HostPlotSteps, PlotSegment)
	}
	if !(v.DetectFraction > 0 && v.DetectFraction < 1 && v.DetectProbability > 0 && v.DetectProbability < 1) {
		relation([]string{"validator.detect_fraction", "validator.detect_probability"}, "and detect_probability must be in (0, 1)")
	}
	return errs
}

func isSquareTile(b int) bool {
	for t := proof.MinTile; t <= proof.MaxTile; t *= 2 {
		if 4*t*t == b {
			return true
		}
	}
	return false
}

// ReadConfig reads home/config.toml over the defaults, then the POG_*
// environment overrides (ApplyEnv), and says where each setting was given,
// without validating; unknown keys are errors, so typos do not pass
// silently. A caller that overrides settings too (pog run's flags) records
// them in the origins, then calls Check.
func ReadConfig(home string) (Config, Origins, error) {
	c := DefaultConfig()
	path := filepath.Join(home, ConfigFile)
	b, _, err := readRegular(path, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil, &Error{fmt.Errorf("no node at %s (no %s): run 'pog init --home %s' first", home, ConfigFile, home)}
	}
	if err != nil {
		return c, nil, fmt.Errorf("config: %w", err)
	}
	src := "config " + path
	md, err := toml.Decode(string(b), &c)
	if und := md.Undecoded(); err == nil && len(und) > 0 {
		err = fmt.Errorf("unknown setting %q", und[0].String())
	}
	if err != nil {
		return c, nil, &Error{fmt.Errorf("%s: %w", src, err)}
	}
	o := Origins{}
	for _, k := range md.Keys() {
		o[k.String()] = src
	}
	return c, o, ApplyEnv(&c, os.Environ(), o)
}

// LoadConfig is ReadConfig's configuration, checked.
func LoadConfig(home string) (Config, error) {
	c, o, err := ReadConfig(home)
	if err == nil {
		err = c.Check(o)
	}
	return c, err
}

// WriteConfig writes c to home/config.toml, every setting preceded by its
// comment, refusing to overwrite an existing file.
func WriteConfig(home string, c Config, profile string) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# pog node configuration (profile %q).\n# Durations are Go durations (\"30s\", \"5m\"); flags of `pog run` override some settings.\n", profile)
	sections := reflect.ValueOf(c)
	for i := 0; i < sections.NumField(); i++ {
		fmt.Fprintf(&buf, "\n[%s]\n", sections.Type().Field(i).Tag.Get("toml"))
		sec := sections.Field(i)
		for j := 0; j < sec.NumField(); j++ {
			f := sec.Type().Field(j)
			if doc := f.Tag.Get("comment") + rangeDoc(sections.Type().Field(i).Tag.Get("toml")+"."+f.Tag.Get("toml")); doc != "" {
				fmt.Fprintf(&buf, "# %s\n", doc)
			}
			v := sec.Field(j).Interface()
			if s, ok := v.([]string); ok && s == nil {
				v = []string{}
			}
			line, err := toml.Marshal(map[string]any{f.Tag.Get("toml"): v})
			if err != nil {
				return err
			}
			buf.Write(line)
		}
	}
	return writeNewFile(filepath.Join(home, ConfigFile), buf.Bytes(), 0o644)
}
