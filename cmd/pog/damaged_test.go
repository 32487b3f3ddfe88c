package main

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// buildPog builds the command once per test binary run.
func buildPog(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// validatorHome makes a stopped validator's home: 17 round records and 4
// signed epoch records, in the WAL or (flushed) in an sstable.
func validatorHome(t *testing.T, dir string, flushed bool) string {
	t.Helper()
	home := filepath.Join(dir, "home")
	if code, _, errs := runPog("init", "--home", home, "--profile", "local"); code != 0 {
		t.Fatal(errs)
	}
	key, err := config.LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(key)
	mkey, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	miner, _ := peer.IDFromPrivateKey(mkey)
	st, err := store.Open(filepath.Join(home, config.StoreDir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 17 {
		r := &store.RoundRecord{Epoch: uint64(i / 5), Round: uint64(i), Miner: []byte(miner), Validator: []byte(id),
			Challenge: []byte("challenge"), Verdict: store.VerdictFailed, Reason: "test"}
		if err := st.PutRound(r); err != nil {
			t.Fatal(err)
		}
	}
	var prev [32]byte
	for e := range 4 {
		raw, err := protocol.Seal(key, &pb.EpochRecord{Version: 1, Epoch: uint64(e), RoundsRoot: make([]byte, 32),
			ScoringConfigHash: make([]byte, 32), PrevRecordHash: prev[:]})
		if err != nil {
			t.Fatal(err)
		}
		o, err := protocol.Open(raw, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			t.Fatal(err)
		}
		prev = protocol.ID(o.Body)
		if err := st.PutEpochRecord(uint64(e), []byte(id), raw); err != nil {
			t.Fatal(err)
		}
	}
	if flushed {
		if err := st.Tamper(func(db *pebble.DB) error { return db.Flush() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return home
}

func fileHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			out[p] = d.Type().String()
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	return out
}

func flipFile(t *testing.T, path string, frac float64, skipZeros bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	for skipZeros && n > 0 && b[n-1] == 0 {
		n-- // a preallocated WAL's unused tail
	}
	b[min(int(float64(n)*frac), n-1)] ^= 0x40
	os.WriteFile(path, b, 0o600)
}

func glob(t *testing.T, home, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(home, config.StoreDir, pattern))
	if len(m) == 0 {
		t.Fatalf("no %s", pattern)
	}
	return m[len(m)-1]
}

// stackTrace matches what a Go panic or fatal error prints.
var stackTrace = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)|\.go:\d+ \+0x`)

// readOnlyCommands are the commands that must not modify a home.
var readOnlyCommands = [][]string{{"rounds"}, {"epochs"}, {"audit"}, {"weights", "--epoch", "0"}, {"pricing"}}

// TestDamagedHomes runs every command against homes damaged as a failing
// disk or a careless operator would: no command may print a Go stack
// trace or exit with anything but 0 or 1, a read-only command never
// changes a file, and a listing either is complete or fails.
func TestDamagedHomes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs it against many homes")
	}
	bin := buildPog(t)
	damages := []struct {
		name    string
		flushed bool
		damage  func(t *testing.T, home string)
	}{
		{"healthy", false, func(*testing.T, string) {}},
		{"WAL flip 10%", false, func(t *testing.T, h string) { flipFile(t, glob(t, h, "*.log"), 0.1, true) }},
		{"WAL flip 50%", false, func(t *testing.T, h string) { flipFile(t, glob(t, h, "*.log"), 0.5, true) }},
		{"WAL flip 90%", false, func(t *testing.T, h string) { flipFile(t, glob(t, h, "*.log"), 0.9, true) }},
		{"MANIFEST mid-file flip", false, func(t *testing.T, h string) { flipFile(t, glob(t, h, "MANIFEST-*"), 0.5, false) }},
		{"MANIFEST last byte", true, func(t *testing.T, h string) { flipFile(t, glob(t, h, "MANIFEST-*"), 1, false) }},
		{"MANIFEST truncated", true, func(t *testing.T, h string) {
			p := glob(t, h, "MANIFEST-*")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()/2)
		}},
		{"MANIFEST marker deleted", false, func(t *testing.T, h string) { os.Remove(glob(t, h, "marker.manifest.*")) }},
		{"sst flip", true, func(t *testing.T, h string) { flipFile(t, glob(t, h, "*.sst"), 0.3, false) }},
		{"head deleted", false, func(t *testing.T, h string) { os.Remove(filepath.Join(h, config.StoreDir, store.HeadFile)) }},
		{"store is a file", false, func(t *testing.T, h string) {
			os.RemoveAll(filepath.Join(h, config.StoreDir))
			os.WriteFile(filepath.Join(h, config.StoreDir), []byte("x"), 0o600)
		}},
		{"key flip", false, func(t *testing.T, h string) { flipFile(t, filepath.Join(h, config.KeyFile), 0.7, false) }},
		{"key FIFO", false, func(t *testing.T, h string) {
			os.Remove(filepath.Join(h, config.KeyFile))
			syscall.Mkfifo(filepath.Join(h, config.KeyFile), 0o600)
		}},
		{"config FIFO", false, func(t *testing.T, h string) {
			os.Remove(filepath.Join(h, config.ConfigFile))
			syscall.Mkfifo(filepath.Join(h, config.ConfigFile), 0o600)
		}},
		{"config garbage", false, func(t *testing.T, h string) {
			os.WriteFile(filepath.Join(h, config.ConfigFile), []byte("\x00\xff[[["), 0o600)
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			home := validatorHome(t, t.TempDir(), d.flushed)
			d.damage(t, home)
			before := fileHashes(t, home)
			intact := 0
			for _, args := range append(readOnlyCommands, []string{"id"}, []string{"status"}) {
				out, code := pogRun(t, bin, 20*time.Second, append(args, "--home", home)...)
				// A config.toml that does not parse is a settings error:
				// exit 2 naming the file, as for pog run below.
				if !(d.name == "config garbage" && code == 2 && strings.Contains(out, "config "+filepath.Join(home, config.ConfigFile))) {
					checkOutput(t, args, out, code)
				}
				t.Logf("pog %v: exit %d: %s", args[0], code, firstLine(out))
				if d.name == "healthy" && args[0] != "audit" && args[0] != "status" && code != 0 {
					t.Errorf("pog %v on a healthy home: exit %d: %s", args, code, out)
				}
				if args[0] == "rounds" && code == 0 && strings.Count(out, "\n") != 18 {
					t.Errorf("pog rounds on a home with %s listed an incomplete store:\n%s", d.name, out)
				}
				if (args[0] == "rounds" || args[0] == "id") && code == 0 {
					intact++
				}
				if after := fileHashes(t, home); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("pog %v changed the home's files", args)
					before = after
				}
			}
			if d.name == "healthy" {
				return
			}
			// A node refuses to start on a damaged home (exit 1, or 2 for
			// a config.toml that does not parse: a settings error); on
			// one whose store and key were intact after all it runs
			// (until killed at the timeout, exit -1).
			out, code := pogRun(t, bin, 60*time.Second, "run", "--home", home, "--role", "validator", "--listen", "/ip4/127.0.0.1/tcp/0")
			if code == -1 && intact == 2 && strings.Contains(out, "node started") {
				return
			}
			if d.name == "config garbage" {
				if code != 2 || !strings.Contains(out, "pog run: config "+filepath.Join(home, config.ConfigFile)) {
					t.Errorf("pog run on a home with %s: exit %d, want 2 naming the file: %s", d.name, code, out)
				}
				return
			}
			checkOutput(t, []string{"run"}, out, code)
			if code != 1 {
				t.Errorf("pog run on a home with %s: exit %d, want 1: %s", d.name, code, out)
			}
		})
	}
}

// pogRun runs bin until it exits, it logs "node started" (a node that
// runs), or the timeout; exit -1 means it was killed.
func pogRun(t *testing.T, bin string, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out := &watchWriter{started: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return out.String(), cmd.ProcessState.ExitCode()
	case <-out.started:
	case <-time.After(timeout):
	}
	cmd.Process.Kill()
	<-done
	return out.String(), -1
}

// watchWriter collects output and closes started at "node started".
type watchWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	started chan struct{}
	seen    bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if !w.seen && strings.Contains(w.b.String(), "node started") {
		w.seen = true
		close(w.started)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func checkOutput(t *testing.T, args []string, out string, code int) {
	t.Helper()
	if stackTrace.MatchString(out) {
		t.Errorf("pog %v printed a Go stack trace:\n%s", args, out)
	}
	if code != 0 && code != 1 {
		t.Errorf("pog %v: exit %d, want 0 or 1:\n%s", args, code, out)
	}
	if code == 1 && !strings.Contains(out, "pog ") && !strings.Contains(out, "level=ERROR") {
		t.Errorf("pog %v failed without saying why:\n%s", args, out)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestReadOnlyHome: the read-only commands print the same on a home they
// cannot write (an archived copy on a read-only filesystem) as on a
// writable one, although Pebble cannot take the store's LOCK file there.
func TestReadOnlyHome(t *testing.T) {
	readOnly := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && op.Kind != errorfs.OpFileClose {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.EROFS}
		}
		return nil
	}))
	defer func() { storeFS = nil }()
	for _, flushed := range []bool{false, true} {
		home := validatorHome(t, t.TempDir(), flushed)
		for _, args := range readOnlyCommands {
			args = append(args, "--home", home)
			storeFS = nil
			code, out, errs := runPog(args...)
			storeFS = readOnly
			roCode, roOut, roErrs := runPog(args...)
			if roCode != code || roOut != out || roErrs != errs {
				t.Errorf("pog %v: on a read-only home exit %d, %q %q; writable exit %d, %q %q", args, roCode, roOut, roErrs, code, out, errs)
			}
		}
	}
}
