package config

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// maxKeyBytes bounds node.key: a marshalled Ed25519 key is 68 bytes.
const maxKeyBytes = 4096

// CreateKey writes a new Ed25519 identity to home/node.key with mode 0600,
// refusing to overwrite one. The key and the directory entry are synced
// before it returns: a crash after init must not leave an empty key.
func CreateKey(home string) (crypto.PrivKey, error) {
	return CreateKeyFrom(home, rand.Reader)
}

// CreateKeyFrom is CreateKey with the key drawn from r (a testnet derives
// every node's key from its seed).
func CreateKeyFrom(home string, r io.Reader) (crypto.PrivKey, error) {
	key, _, err := crypto.GenerateEd25519Key(r)
	if err != nil {
		return nil, err
	}
	b, err := crypto.MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := writeNewFile(filepath.Join(home, KeyFile), b, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// syncer syncs a written file and its directory; tests record the calls.
var syncer interface {
	Sync(f *os.File) error
} = osSyncer{}

type osSyncer struct{}

func (osSyncer) Sync(f *os.File) error { return f.Sync() }

// writeNewFile creates path (failing if it exists), writes b, and syncs the
// file and then its directory, so that both the bytes and the name survive
// a crash.
func writeNewFile(path string, b []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = syncer.Sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // a partial file would pass for a node's key or config
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	err = syncer.Sync(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return nil
}

// readRegular reads a regular file of at most max bytes. Anything else (a
// FIFO would block the read forever, a device is no file) is refused.
func readRegular(path string, max int64) ([]byte, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file (%v)", path, st.Mode().Type())
	}
	if st.Size() > max {
		return nil, nil, fmt.Errorf("%s: %d bytes, at most %d expected", path, st.Size(), max)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The name may have been replaced since the Stat.
	if st2, err := f.Stat(); err != nil || !os.SameFile(st, st2) {
		return nil, nil, fmt.Errorf("%s changed while being opened", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: more than %d bytes", path, max)
	}
	return b, st, err
}

// LoadKey reads home/node.key. It refuses a key readable by group or
// others (whoever reads it can sign as this node), a file that is not a
// regular file, an Ed25519 key whose public half does not match its seed,
// and a key whose peer ID differs from node.peer_id in home/config.toml:
// a damaged key would otherwise sign as another, unusable identity.
func LoadKey(home string) (crypto.PrivKey, error) {
	path := filepath.Join(home, KeyFile)
	b, st, err := readRegular(path, maxKeyBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no key at %s: run 'pog init --home %s' first", path, home)
	}
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %s has mode %v: run 'chmod 600 %s'", path, st.Mode().Perm(), path)
	}
	key, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s is damaged: %w", path, err)
	}
	if err := checkEd25519(key); err != nil {
		return nil, fmt.Errorf("key %s is damaged: %w", path, err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	want, err := configPeerID(home)
	if err != nil {
		return nil, err
	}
	if want != "" && want != id.String() {
		return nil, fmt.Errorf("key %s is for peer %s, but %s says node.peer_id = %q: the key is damaged or not this node's; restore it from a backup",
			path, id, filepath.Join(home, ConfigFile), want)
	}
	return key, nil
}

// checkEd25519 checks that an Ed25519 key's stored public key is its
// seed's: libp2p keeps both and would sign with one, verify with the other.
func checkEd25519(key crypto.PrivKey) error {
	if key.Type() != crypto.Ed25519 {
		return nil
	}
	raw, err := key.Raw()
	if err != nil {
		return err
	}
	if len(raw) != ed25519.PrivateKeySize {
		return fmt.Errorf("ed25519 key of %d bytes, want %d", len(raw), ed25519.PrivateKeySize)
	}
	derived := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
	if !bytes.Equal(derived[ed25519.SeedSize:], raw[ed25519.SeedSize:]) {
		return errors.New("its public key does not match its private seed")
	}
	return nil
}

// configPeerID returns node.peer_id from home/config.toml: "" if the file
// or the setting is absent (a home from before peer IDs were recorded).
func configPeerID(home string) (string, error) {
	path := filepath.Join(home, ConfigFile)
	b, _, err := readRegular(path, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	var c struct {
		Node struct {
			PeerID string `toml:"peer_id"`
		} `toml:"node"`
	}
	if _, err := toml.Decode(string(b), &c); err != nil {
		return "", fmt.Errorf("config %s: %w", path, err)
	}
	return c.Node.PeerID, nil
}
