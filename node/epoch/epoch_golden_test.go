package epoch

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata golden files")

// goldenEpochFile pins the signed epoch records (and each epoch's consensus
// hash) that three validators derive from a fixed store. Every architecture
// must produce these bytes: .ci/determinism.sh runs this test for arm64 under
// qemu, where the Go compiler would fuse multiply-adds that amd64 rounds
// separately. A deliberate change to scoring, encoding or consensus
// regenerates it with `go test ./node/epoch -run TestEpochRecordGolden -update`.
const goldenEpochFile = "testdata/epoch_golden.txt"

// goldenEpochLines builds the fixed store and returns one line per signed
// epoch record and per consensus result.
func goldenEpochLines(t *testing.T) []string {
	const epochs, validators, miners = 4, 3, 10
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := nodetest.SplitMix64(0x706f672d65706f63)
	type key struct {
		k  crypto.PrivKey
		id peer.ID
	}
	var vs, ms []key
	for i := range validators {
		k, id := nodetest.SeededKey(t, byte(1+i))
		vs = append(vs, key{k, id})
	}
	for i := range miners {
		k, id := nodetest.SeededKey(t, byte(100+i))
		ms = append(ms, key{k, id})
	}
	gpus := []string{"H200", "NVIDIA H100 80GB HBM3", "RTX 4090", "A100-SXM4-80GB", "Mystery GPU"}
	for e := uint64(1); e <= epochs; e++ {
		for i, m := range ms {
			// Fractional hardware figures, so the CPU, RAM and storage parts
			// are sums of inexact products.
			a := &pb.MinerAnnounce{Version: protocol.Version, Seq: e, Precisions: []uint32{1, 2}, Backend: "golden",
				MaxOutputBytes: 1 << 30, Hardware: &pb.Hardware{
					CpuCores: uint32(1 + rng.Next()%128), CpuGhz: 1 + 3*rng.Unit(),
					RamBytes: rng.Next() % 3e12, RamGbps: 400 * rng.Unit(),
					StorageBytes: rng.Next() % 40e12, StorageMbps: 9000 * rng.Unit()}}
			for g := range 1 + i%3 {
				a.Gpus = append(a.Gpus, &pb.GPU{Name: gpus[(i+g)%len(gpus)]})
			}
			raw, err := protocol.Seal(m.k, a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PutAnnounce(e, []byte(m.id), raw); err != nil {
				t.Fatal(err)
			}
		}
		for vi, v := range vs {
			for r := uint64(1); r <= 3; r++ {
				for mi, m := range ms {
					if (mi+vi+int(r))%7 == 0 {
						continue // not every validator reaches every miner
					}
					if err := st.PutRound(nodetest.GoldenRound(t, &rng, v.k, v.id, m.id, e, uint64(vi)*10+r)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	var lines []string
	for _, v := range vs {
		sc := &Scorer{Store: st, Validator: v.id, Config: scoring.DefaultConfig()}
		for e := uint64(1); e <= epochs; e++ {
			rec, _, err := sc.Close(e)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := protocol.Seal(v.k, rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.PutEpochRecord(e, []byte(v.id), raw); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("record %d %s %x", e, v.id, raw))
		}
	}
	err = ConsensusEpochs(st, epochs, nil, consensus.DefaultParams(), func(e uint64, r *consensus.Result) error {
		h := r.Hash()
		lines = append(lines, fmt.Sprintf("consensus %d %x", e, h))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestEpochRecordGolden checks the epoch records and consensus hashes of a
// fixed store against testdata, bit for bit. With POG_GOLDEN_OUT set it also
// writes its lines there, so CI can compare two architectures' runs directly.
func TestEpochRecordGolden(t *testing.T) {
	got := []byte(strings.Join(goldenEpochLines(t), "\n") + "\n")
	if out := os.Getenv("POG_GOLDEN_OUT"); out != "" {
		if err := os.WriteFile(out, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.FromSlash(goldenEpochFile)
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				j := 0
				for j < min(len(gl[i]), len(wl[i])) && gl[i][j] == wl[i][j] {
					j++
				}
				from := max(0, j-16)
				t.Fatalf("%s line %d differs at column %d:\n got …%.48s\nwant …%.48s", goldenEpochFile, i+1, j+1, gl[i][from:], wl[i][from:])
			}
		}
		t.Fatalf("%d lines, %s has %d", len(gl), goldenEpochFile, len(wl))
	}
}
