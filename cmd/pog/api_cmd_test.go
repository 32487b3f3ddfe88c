package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/pog-network/pog/node/api"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// The offline commands print the same thing whether they read the store
// or ask a running node's API (here: the API over the same store).
func TestOfflineCommandsSameThroughAPI(t *testing.T) {
	home := filepath.Join(t.TempDir(), "n")
	if code, _, errs := runPog("init", "--home", home, "--profile", "local"); code != 0 {
		t.Fatal(errs)
	}
	key, err := config.LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(home, config.StoreDir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The home's own key is a miner here too, to see it marked.
	miner := peerOf(t, key)
	for e := uint64(7); e <= 8; e++ {
		raw, err := protocol.Seal(key, &pb.EpochRecord{Version: protocol.Version, Epoch: e,
			Weights:    []*pb.MinerWeight{{Miner: []byte(miner), Weight: 1}},
			RoundsRoot: make([]byte, 32), ScoringConfigHash: make([]byte, 32), PrevRecordHash: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutEpochRecord(e, []byte(peerOf(t, key)), raw); err != nil {
			t.Fatal(err)
		}
	}
	stopAPI := serveStoreAPI(t, home, st)
	commands := [][]string{
		{"epochs", "--json"}, {"epochs"},
		{"weights", "--epoch", "8", "--json"}, {"weights", "--epoch", "7"},
		{"rounds", "--json"},
	}
	viaAPI := map[int]string{}
	for i, args := range commands {
		code, out, errs := runPog(append(args, "--home", home)...)
		if code != 0 {
			t.Fatalf("%v via the API: %d %s", args, code, errs)
		}
		viaAPI[i] = out
	}
	// Without --epoch, weights asks the node for the latest.
	if code, out, _ := runPog("weights", "--home", home); code != 0 || !strings.HasPrefix(out, "epoch 8 ") ||
		!strings.Contains(out, miner.String()+"  (this node)") {
		t.Fatalf("weights without --epoch via the API: %d %q", code, out)
	}
	stopAPI()
	st.Close()
	// The node is gone but its address file stays (a crash): the commands
	// say so and read the store.
	for i, args := range commands {
		code, out, errs := runPog(append(args, "--home", home)...)
		if code != 0 || !strings.Contains(errs, "does not answer; reading the store") {
			t.Fatalf("%v from the store: %d %s", args, code, errs)
		}
		if out != viaAPI[i] {
			t.Errorf("%v: the API printed\n%s\nthe store\n%s", args, viaAPI[i], out)
		}
	}
}

// A node refuses an API address anyone on the network could reach unless
// a token protects it.
func TestRunRefusesPublicAPIWithoutToken(t *testing.T) {
	home := filepath.Join(t.TempDir(), "n")
	runPog("init", "--home", home, "--profile", "local")
	code, _, errs := runPog("run", "--home", home, "--role", "validator", "--api", "0.0.0.0:0", "--log-format", "json")
	if code != 1 || !strings.Contains(errs, "not loopback") {
		t.Fatalf("run --api 0.0.0.0:0: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(home, APIAddrFile)); !os.IsNotExist(err) {
		t.Fatalf("%s written by a node that did not start its API", APIAddrFile)
	}
}

func peerOf(t *testing.T, key crypto.PrivKey) peer.ID {
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// serveStoreAPI serves st's API on a loopback port and records the address
// in home, as a running node does, so the offline commands answer through
// it; stop shuts the server down and leaves the address file (a crash).
func serveStoreAPI(t *testing.T, home string, st *store.Store) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(api.New(api.Options{Store: st}))
	go srv.Serve(ln)
	os.WriteFile(filepath.Join(home, APIAddrFile), []byte(ln.Addr().String()+"\n"), 0o600)
	return func() { srv.Close() }
}
