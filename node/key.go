package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
)

// CreateKey writes a new Ed25519 identity to home/node.key with mode 0600,
// refusing to overwrite one.
func CreateKey(home string) (crypto.PrivKey, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	b, err := crypto.MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(home, KeyFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}

// LoadKey reads home/node.key. A key readable by group or others is refused:
// whoever reads it can sign as this node.
func LoadKey(home string) (crypto.PrivKey, error) {
	path := filepath.Join(home, KeyFile)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no key at %s: run 'pog init --home %s' first", path, home)
	}
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %s has mode %v: run 'chmod 600 %s'", path, st.Mode().Perm(), path)
	}
	if st.Size() > 4096 {
		return nil, fmt.Errorf("key %s: %d bytes is not a key", path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return key, nil
}
