package main

import (
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

// explainHome makes a stopped validator's home: in epochs 1 and 2, miner
// 0 (one H200 announced) plays a probe, an fp16 and an fp32 round and
// misses one; miner 1 passes an fp16 round and fails one. The validator's
// scorer closes both epochs; the scores of epoch 2 are returned.
func explainHome(t *testing.T) (string, []peer.ID, []scoring.Score) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "v")
	if code, _, errs := runPog("init", "--home", home, "--profile", "local"); code != 0 {
		t.Fatal(errs)
	}
	vkey, err := config.LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	v := peerOf(t, vkey)
	st, err := store.Open(filepath.Join(home, config.StoreDir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mkeys []crypto.PrivKey
	var miners []peer.ID
	for range 2 {
		k, _, _ := crypto.GenerateEd25519Key(rand.Reader)
		mkeys, miners = append(mkeys, k), append(miners, peerOf(t, k))
	}
	sc := &epoch.Scorer{Store: st, Validator: v, Config: scoring.DefaultConfig()}
	var scores []scoring.Score
	for e := uint64(1); e <= 2; e++ {
		for i, k := range mkeys {
			ann, err := protocol.Seal(k, &pb.MinerAnnounce{Version: protocol.Version, Seq: e, Precisions: []uint32{1, 2},
				Backend: "test", MaxOutputBytes: 1 << 30, Gpus: []*pb.GPU{{Name: "H200"}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PutAnnounce(e, []byte(miners[i]), ann); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range explainRounds(t, vkey, v, miners, e) {
			if err := st.PutRound(r); err != nil {
				t.Fatal(err)
			}
		}
		rec, s, err := sc.Close(e)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := protocol.Seal(vkey, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutEpochRecord(e, []byte(v), raw); err != nil {
			t.Fatal(err)
		}
		scores = s
	}
	return home, miners, scores
}

// explainRounds are epoch e's rounds (see explainHome).
func explainRounds(t *testing.T, vkey crypto.PrivKey, v peer.ID, miners []peer.ID, e uint64) []*store.RoundRecord {
	round := func(m peer.ID, r uint64, prec proof.Precision, probe bool, tflops float64, reason string) *store.RoundRecord {
		p := proof.Params{Precision: prec, Batch: 1, M: 256, K: 256, N: 512, Tile: 64, Miner: []byte(m)}
		enc, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		ch, err := protocol.Seal(vkey, &pb.Challenge{Version: protocol.Version, Epoch: e, Round: r, Miner: []byte(m),
			Params: [][]byte{enc}, SecretCommitment: make([]byte, 32), Samples: 4, DeadlineMs: 5000, Probe: probe})
		if err != nil {
			t.Fatal(err)
		}
		rec := &store.RoundRecord{Epoch: e, Round: r, Miner: []byte(m), Validator: []byte(v), Challenge: ch,
			Commitment: []byte{1}, FLOPs: p.FLOPs(), TFLOPS: tflops, Verdict: store.VerdictVerified}
		switch {
		case strings.HasPrefix(reason, "no first root"):
			rec.Verdict, rec.Reason, rec.Commitment, rec.TFLOPS = store.VerdictFailed, reason, nil, 0
		case reason != "":
			rec.Verdict, rec.Reason, rec.TFLOPS = store.VerdictFailed, reason, 0
		}
		return rec
	}
	return []*store.RoundRecord{
		round(miners[0], e*10+1, proof.FP16, true, 0.01, ""),
		round(miners[0], e*10+2, proof.FP16, false, 500, ""),
		round(miners[0], e*10+3, proof.FP32, false, 450, ""),
		round(miners[0], e*10+4, proof.FP16, false, 0, "no first root within 5s"),
		round(miners[1], e*10+5, proof.FP16, false, 100, ""),
		round(miners[1], e*10+6, proof.FP32, false, 0, "tile 3 does not match its root"),
	}
}

// TestExplain: the breakdowns are the scores the validator's scorer
// computed, and the table shows each part, each round and why it counted.
func TestExplain(t *testing.T) {
	home, miners, scores := explainHome(t)
	for _, args := range [][]string{{"--epoch", "2"}, {}} { // the latest closed epoch by default
		code, out, errs := runPog(append([]string{"explain", "--home", home, "--json"}, args...)...)
		var got []epoch.MinerScore
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != len(scores) {
			t.Fatalf("explain %v: %d %v %s %s", args, code, err, errs, out)
		}
		for i := range got {
			if got[i].Epoch != 2 || !reflect.DeepEqual(got[i].Score, scores[i]) {
				t.Errorf("explain %v: %+v, the scorer's %+v", args, got[i].Score, scores[i])
			}
		}
	}
	code, out, errs := runPog("explain", "--home", home, "--miner", miners[0].String())
	for _, want := range []string{"miner " + miners[0].String() + "  epoch 2", "\ngpu ", "    fp16 ", "  memory ",
		"\nram ", "  ram bandwidth ", "\ntotal ", "probe: availability and memory, throughput not scored",
		"missed: lowers availability", "no first root within 5s", "availability 0.75 = 3 verified ÷ (3 verified + 1 missed)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("explain --miner: %d, no %q in\n%s%s", code, want, out, errs)
		}
	}
	if code, out, _ := runPog("explain", "--home", home, "--miner", miners[1].String()); code != 0 ||
		!strings.Contains(out, "failed: zeroes the GPU part  tile 3 does not match its root") || !strings.Contains(out, "flag: 1 of 2 rounds failed") {
		t.Errorf("explain a failing miner: %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--miner", "nonsense"}, 2, "not a peer ID"},
		{[]string{"--miner", homePeer(home)}, 1, "has no score in epoch 2"},
		{[]string{"--epoch", "7"}, 1, "no round evidence of epoch 7"},
	} {
		if code, _, errs := runPog(append([]string{"explain", "--home", home}, c.args...)...); code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("explain %v: %d %q, want %d %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestWeightsMiner: weights --miner prints only that miner's row, then its
// breakdown (in JSON, under scores).
func TestWeightsMiner(t *testing.T) {
	home, miners, scores := explainHome(t)
	m := miners[0].String()
	code, out, errs := runPog("weights", "--home", home, "--epoch", "2", "--miner", m)
	if code != 0 || !strings.Contains(out, "\n"+m+"  ") || strings.Contains(out, miners[1].String()) ||
		!strings.Contains(out, "miner "+m+"  epoch 2  validator") {
		t.Fatalf("weights --miner: %d %s\n%s", code, errs, out)
	}
	code, out, errs = runPog("weights", "--home", home, "--epoch", "2", "--miner", m, "--json")
	var w weightsOut
	i := slices.IndexFunc(scores, func(s scoring.Score) bool { return s.Miner == m })
	if err := json.Unmarshal([]byte(out), &w); code != 0 || err != nil || len(w.Miners) != 1 || len(w.Scores) != 1 ||
		!reflect.DeepEqual(w.Scores[0].Score, scores[i]) {
		t.Fatalf("weights --miner --json: %d %v %s\n%s", code, err, errs, out)
	}
}

// TestExplainThroughAPI: explain and weights --miner print the same from a
// running node's API as from its store.
func TestExplainThroughAPI(t *testing.T) {
	home, miners, _ := explainHome(t)
	st, err := store.Open(filepath.Join(home, config.StoreDir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stopAPI := serveStoreAPI(t, home, st)
	commands := [][]string{
		{"explain"}, {"explain", "--json", "--epoch", "1"}, {"explain", "--miner", miners[1].String()},
		{"weights", "--epoch", "2", "--miner", miners[0].String()},
	}
	viaAPI := map[int]string{}
	for i, args := range commands {
		code, out, errs := runPog(append(args, "--home", home)...)
		if code != 0 {
			t.Fatalf("%v via the API: %d %s", args, code, errs)
		}
		viaAPI[i] = out
	}
	if code, _, errs := runPog("explain", "--home", home, "--miner", homePeer(home)); code != 1 || !strings.Contains(errs, "has no score") {
		t.Errorf("an unscored miner via the API: %d %s", code, errs)
	}
	stopAPI()
	st.Close()
	for i, args := range commands {
		code, out, errs := runPog(append(args, "--home", home)...)
		if code != 0 || out != viaAPI[i] {
			t.Errorf("%v: %d %s; the API printed\n%s\nthe store\n%s", args, code, errs, viaAPI[i], out)
		}
	}
}
