package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// GenesisFile is where `pog init --network` writes a network's validator
// stakes, named by network.genesis.
const GenesisFile = "genesis.toml"

// NetworkSearchPath holds the directories `pog init --network NAME` looks
// in for NAME.toml: the repository's networks/ and where packages install
// them.
var NetworkSearchPath = []string{"networks", "/etc/pog/networks"}

// maxNetworkFile bounds a network file: a few thousand validators.
const maxNetworkFile = 1 << 20

// Network is a network file: what a new node needs to join one network.
// Its operators publish it; `pog init --network` turns it into config.toml
// settings and a genesis file:
//
//	name = "example"
//	profile = "default"           # pog init profile the config starts from
//	epoch_length = "72m"          # network.epoch_length (optional)
//	bootstrap = ["/dns4/boot.example.org/tcp/4001/p2p/12D3KooW…"]
//
//	[[validator]]                 # network.validators and the genesis stakes
//	id = "12D3KooW…"
//	stake = 1000.0
type Network struct {
	Name        string             `toml:"name"`
	Profile     string             `toml:"profile"`
	EpochLength Duration           `toml:"epoch_length"`
	Bootstrap   []string           `toml:"bootstrap"`
	Validators  []GenesisValidator `toml:"validator"`
}

// FindNetwork resolves a --network argument: an existing file, or NAME.toml
// in NetworkSearchPath.
func FindNetwork(name string) (string, error) {
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		return name, nil
	}
	if !strings.ContainsAny(name, `/\`) && !strings.HasSuffix(name, ".toml") {
		for _, dir := range NetworkSearchPath {
			p := filepath.Join(dir, name+".toml")
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("network %q: no such file, nor %s.toml in %s", name, name, strings.Join(NetworkSearchPath, ", "))
}

// ReadNetwork reads and checks a network file; unknown keys are errors.
func ReadNetwork(path string) (*Network, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("network file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxNetworkFile+1))
	if err != nil {
		return nil, fmt.Errorf("network file %s: %w", path, err)
	}
	if len(data) > maxNetworkFile {
		return nil, fmt.Errorf("network file %s: larger than %d bytes", path, maxNetworkFile)
	}
	var n Network
	md, err := toml.Decode(string(data), &n)
	if err != nil {
		return nil, fmt.Errorf("network file %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("network file %s: unknown setting %q", path, und[0].String())
	}
	if n.Name == "" {
		return nil, fmt.Errorf("network file %s: no name", path)
	}
	if _, ok := Profiles[n.Profile]; !ok && n.Profile != "" {
		return nil, fmt.Errorf("network file %s: unknown profile %q", path, n.Profile)
	}
	if _, err := (Genesis{Validators: n.Validators}).Stakes(); err != nil {
		return nil, fmt.Errorf("network file %s: %w", path, err)
	}
	return &n, nil
}

// Apply sets c's bootstrap peers, validators, epoch length and genesis file
// from the network, and checks the result.
func (n *Network) Apply(c *Config) error {
	c.Node.Bootstrap = append([]string{}, n.Bootstrap...)
	c.Network.Validators = nil
	for _, v := range n.Validators {
		c.Network.Validators = append(c.Network.Validators, v.ID)
	}
	c.Network.TrustAnyValidator = false
	if n.EpochLength.Duration != 0 {
		c.Network.EpochLength = n.EpochLength
	}
	c.Network.Genesis = GenesisFile
	if err := c.Validate(); err != nil {
		return fmt.Errorf("network %s: %w", n.Name, err)
	}
	return nil
}

// WriteGenesis writes the network's validator stakes to home/genesis.toml,
// refusing to overwrite an existing file.
func (n *Network) WriteGenesis(home string) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Validators and stakes of network %q, from its network file.\n\n", n.Name)
	if err := toml.NewEncoder(&buf).Encode(Genesis{Validators: n.Validators}); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(home, GenesisFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	return errors.Join(err, f.Close())
}
