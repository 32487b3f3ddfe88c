package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// initHome writes a key and a config recording its peer ID, as pog init
// does.
func initHome(t *testing.T) (string, peer.ID) {
	t.Helper()
	home := t.TempDir()
	key, err := CreateKey(home)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(key)
	c := LocalConfig()
	c.Node.PeerID = id.String()
	if err := WriteConfig(home, c, "local"); err != nil {
		t.Fatal(err)
	}
	return home, id
}

// TestKeyFlips flips each bit of node.key: every damaged key is refused,
// with the peer ID in config.toml and without it.
func TestKeyFlips(t *testing.T) {
	for _, withID := range []bool{true, false} {
		home, _ := initHome(t)
		if !withID {
			os.WriteFile(filepath.Join(home, ConfigFile), []byte("[node]\n"), 0o644)
		}
		path := filepath.Join(home, KeyFile)
		good, _ := os.ReadFile(path)
		for bit := range 8 * len(good) {
			b := slices.Clone(good)
			b[bit/8] ^= 1 << (bit % 8)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadKey(home); err == nil {
				t.Errorf("peer ID in config %v: key with bit %d flipped accepted", withID, bit)
			}
		}
	}
}

// TestKeyOtherNode: a valid key that is not the one config.toml names.
func TestKeyOtherNode(t *testing.T) {
	home, _ := initHome(t)
	other, _ := initHome(t)
	b, _ := os.ReadFile(filepath.Join(other, KeyFile))
	os.WriteFile(filepath.Join(home, KeyFile), b, 0o600)
	if _, err := LoadKey(home); err == nil || !strings.Contains(err.Error(), "node.peer_id") {
		t.Fatalf("another node's key: %v, want a peer ID mismatch", err)
	}
}

// TestKeyNotRegular: a directory (or FIFO, key_unix_test.go) as node.key is
// refused without reading it.
func TestKeyNotRegular(t *testing.T) {
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, KeyFile), 0o700)
	if _, err := LoadKey(home); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory as key: %v", err)
	}
}

// syncRecorder records which files are synced.
type syncRecorder struct{ synced []string }

func (r *syncRecorder) Sync(f *os.File) error {
	r.synced = append(r.synced, f.Name())
	return f.Sync()
}

// TestInitSyncs: the key and the config are synced, then their directory,
// before CreateKey and WriteConfig return, so a crash after init keeps
// them. (Losing unsynced writes cannot be simulated portably; the calls
// can be checked.)
func TestInitSyncs(t *testing.T) {
	rec := &syncRecorder{}
	syncer = rec
	defer func() { syncer = osSyncer{} }()
	home, _ := initHome(t)
	want := []string{filepath.Join(home, KeyFile), home, filepath.Join(home, ConfigFile), home}
	if !slices.Equal(rec.synced, want) {
		t.Fatalf("synced %q, want %q", rec.synced, want)
	}
}
