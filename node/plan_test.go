package node

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
)

func TestPlanChallenge(t *testing.T) {
	miner := newActor(t).id
	cfg := LocalConfig().Validator // size 256, k 256, 16 KiB tiles (t = 64)
	tests := []struct {
		name     string
		ann      *pb.MinerAnnounce
		size     uint32
		subs     int
		prec     proof.Precision
		errMatch string
	}{
		{"capacity allows the full size", &pb.MinerAnnounce{Precisions: []uint32{1, 2}, MaxOutputBytes: 1 << 30}, 256, 1, proof.FP16, ""},
		{"capacity caps the size", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 4 * 128 * 128}, 128, 1, proof.FP16, ""},
		{"one sub-challenge per GPU", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 1 << 30, Gpus: []*pb.GPU{{}, {}, {}}}, 256, 3, proof.FP16, ""},
		{"unsupported precision falls back", &pb.MinerAnnounce{Precisions: []uint32{2}, MaxOutputBytes: 1 << 30}, 256, 1, proof.FP32, ""},
		{"too small to hold two tiles", &pb.MinerAnnounce{Precisions: []uint32{1}, MaxOutputBytes: 4 * 64 * 64}, 0, 0, 0, "cannot hold"},
	}
	for _, tt := range tests {
		pl, err := planChallenge(cfg, miner, tt.ann, bytes.NewReader(bytes.Repeat([]byte{7, 1, 2}, 1000)))
		if tt.errMatch != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
				t.Errorf("%s: got %v, want error %q", tt.name, err, tt.errMatch)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(pl.params) != tt.subs {
			t.Fatalf("%s: %d sub-challenges, want %d", tt.name, len(pl.params), tt.subs)
		}
		nonces := map[[32]byte]bool{}
		for _, p := range pl.params {
			if p.M != tt.size || p.N != tt.size || p.Precision != tt.prec || string(p.Miner) != string(miner) {
				t.Errorf("%s: got %v %d×%d for %s", tt.name, p.Precision, p.M, p.N, p.Miner)
			}
			if p.OutputBytes() > tt.ann.MaxOutputBytes {
				t.Errorf("%s: output %d exceeds capacity", tt.name, p.OutputBytes())
			}
			nonces[p.Nonce] = true
		}
		if len(nonces) != tt.subs {
			t.Errorf("%s: sub-challenges share a nonce", tt.name)
		}
		if want := min(66, int(pl.params[0].Tiles())); pl.samples != want {
			t.Errorf("%s: %d samples, want %d", tt.name, pl.samples, want)
		}
	}
}
