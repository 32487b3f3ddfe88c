// Package config owns a node's home directory: config.toml (Config, its
// profiles, the range of every numeric setting, POG_* environment
// overrides and the generated configuration reference), the node.key
// identity, and the network and genesis files `pog init --network` reads
// and writes. It decides what a node may be configured to do; it starts
// nothing.
package config
