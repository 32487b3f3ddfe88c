package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/protocol/scoring"
)

// proc is a `pog run` child whose JSON log lines arrive on events.
type proc struct {
	cmd    *exec.Cmd
	events chan map[string]any
	done   chan error
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, events: make(chan map[string]any, 1024), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				select {
				case p.events <- ev:
				default: // a slow test must not block the node
				}
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return p
}

// stop sends SIGTERM and requires a clean exit.
func (p *proc) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("%v exited with %v", p.cmd.Args, err)
		}
	case <-time.After(timeout):
		t.Fatalf("%v did not stop within %v of SIGTERM", p.cmd.Args, timeout)
	}
}

func pogOut(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("pog %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestThreeProcesses runs docs/operator/install.md's local setup: one
// validator and two miners as separate processes on 127.0.0.1, until the
// validator has verified rounds for both miners; then `pog rounds --json` must show them.
func TestThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three processes")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	homes := map[string]string{}
	for _, n := range []string{"validator", "miner1", "miner2"} {
		homes[n] = filepath.Join(dir, n)
		pogOut(t, bin, "init", "--home", homes[n], "--profile", "local")
		// Short epochs, so the run also closes epochs for the audit below;
		// all evidence kept, since at 2 s an epoch the default retention
		// prunes a round within seconds, before pog rounds reads it.
		path := filepath.Join(homes[n], "config.toml")
		cfg, _ := os.ReadFile(path)
		r := strings.NewReplacer(`epoch_length = "1m0s"`, `epoch_length = "2s"`, `retain_evidence_epochs = 4`, `retain_evidence_epochs = -1`)
		os.WriteFile(path, []byte(r.Replace(string(cfg))), 0o644)
	}
	v := startProc(t, bin, "run", "--home", homes["validator"], "--role", "validator",
		"--listen", "/ip4/127.0.0.1/tcp/0", "--log-format", "json", "--api", "127.0.0.1:0")
	deadline := time.After(90 * time.Second)
	var vaddr string
	for vaddr == "" {
		select {
		case ev := <-v.events:
			if ev["msg"] == "node started" {
				for _, a := range ev["addrs"].([]any) {
					vaddr = a.(string)
				}
			}
		case err := <-v.done:
			t.Fatalf("validator exited: %v", err)
		case <-deadline:
			t.Fatal("validator did not start")
		}
	}
	miners := map[string]bool{}
	var mprocs []*proc
	for _, n := range []string{"miner1", "miner2"} {
		miners[pogOut(t, bin, "id", "--home", homes[n])] = false
		mprocs = append(mprocs, startProc(t, bin, "run", "--home", homes[n], "--role", "miner", "--bootstrap", vaddr, "--log-format", "json", "--api", "127.0.0.1:0"))
	}
	// Wait for a verified round of each miner, then for an epoch record
	// that weighs both.
	var lastClosed, weighed float64
	for verified, closed := 0, false; verified < len(miners) || !closed; {
		select {
		case ev := <-v.events:
			if m, ok := ev["miner"].(string); ok && ev["msg"] == "round verified" && !miners[m] {
				miners[m] = true
				verified++
			}
			if e, ok := ev["epoch"].(float64); ok && ev["msg"] == "epoch closed" {
				lastClosed = e
			}
			if w, ok := ev["weights"].(float64); ok && ev["msg"] == "epoch closed" && w == 2 && verified == len(miners) {
				closed, weighed = true, lastClosed
			}
		case <-deadline:
			t.Fatalf("no verified round for every miner and epoch record in time: %v", miners)
		}
	}
	// The validator's records are worth checking on a miner's home too:
	// wait until miner1 has stored one that weighs both miners.
	for stored := false; !stored; {
		select {
		case ev := <-mprocs[0].events:
			stored = ev["msg"] == "epoch record stored" && ev["miners"] == float64(2)
		case <-deadline:
			t.Fatal("miner1 stored no epoch record weighing both miners")
		}
	}
	waitWeighed(t, mprocs, deadline)
	checkRunningAPI(t, bin, homes, uint64(weighed))
	// A fourth node, started late from the validator's address, fetches
	// the records it missed by record sync (SPEC §22).
	homes["late"] = filepath.Join(dir, "late")
	pogOut(t, bin, "init", "--home", homes["late"], "--profile", "local")
	path := filepath.Join(homes["late"], "config.toml")
	cfg, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(cfg), `epoch_length = "1m0s"`, `epoch_length = "2s"`, 1)), 0o644)
	late := startProc(t, bin, "run", "--home", homes["late"], "--role", "miner", "--bootstrap", vaddr, "--log-format", "json")
	for synced := false; !synced; {
		select {
		case ev := <-late.events:
			synced = ev["msg"] == "sync: fetched epoch records"
		case <-time.After(60 * time.Second):
			t.Fatal("the late node fetched no epoch records")
		}
	}
	late.stop(t, 20*time.Second)
	v.stop(t, 20*time.Second)
	for _, m := range mprocs {
		m.stop(t, 20*time.Second)
	}
	checkAPIStopped(t, homes)
	var rows []roundRow
	if err := json.Unmarshal([]byte(pogOut(t, bin, "rounds", "--home", homes["validator"], "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Verdict == "verified" && r.TFLOPS > 0 {
			delete(miners, r.Miner)
		}
	}
	if len(miners) > 0 {
		t.Fatalf("pog rounds shows no verified round for %v (%d rows)", miners, len(rows))
	}

	// The epoch tools on the validator's home, and on a miner's (which holds
	// the validator's epoch records too).
	var epochs, minerEpochs []epochRow
	json.Unmarshal([]byte(pogOut(t, bin, "epochs", "--home", homes["validator"], "--json")), &epochs)
	json.Unmarshal([]byte(pogOut(t, bin, "epochs", "--home", homes["miner1"], "--json")), &minerEpochs)
	if len(epochs) == 0 || len(minerEpochs) == 0 {
		t.Fatalf("pog epochs lists %d records on the validator, %d on a miner", len(epochs), len(minerEpochs))
	}
	// The validator's newest record may not have reached the miner before
	// it stopped: ask about one the miner holds.
	last := minerEpochs[len(minerEpochs)-1].Epoch
	var w weightsOut
	json.Unmarshal([]byte(pogOut(t, bin, "weights", "--home", homes["miner1"], "--epoch", fmt.Sprint(last), "--json")), &w)
	if w.Hash == "" || len(w.Trust) != 1 {
		t.Fatalf("pog weights on a miner's home: %+v", w)
	}
	var prices []priceRow
	json.Unmarshal([]byte(pogOut(t, bin, "pricing", "--home", homes["validator"], "--json")), &prices)
	// Rounds come at random times (duty cycle), so the latest closed epoch
	// may have evidence of one miner only, and in 2 s epochs its fp16
	// rounds may all be probes, which are not scored (price 0): each
	// row's price must follow from its measured fp16 throughput.
	c := scoring.DefaultConfig()
	if len(prices) == 0 || len(prices) > 2 {
		t.Fatalf("pog pricing: %+v", prices)
	}
	for _, p := range prices {
		want := c.BaseRateUSD * p.FP16TFLOPS / float64(p.GPUs) / c.Reference.GPUFP16TFLOPS * scoring.Demand(c, 0.7)
		if p.GPUs < 1 || math.Abs(p.PricePerGPU-want) > 1e-9*max(1, want) {
			t.Fatalf("pog pricing: %+v, want %v per GPU-hour", p, want)
		}
	}
	var lateEpochs []epochRow
	json.Unmarshal([]byte(pogOut(t, bin, "epochs", "--home", homes["late"], "--json")), &lateEpochs)
	held := map[uint64]bool{}
	for _, r := range lateEpochs {
		held[r.Epoch] = true
	}
	for _, r := range epochs {
		if float64(r.Epoch) <= lastClosed && !held[r.Epoch] {
			t.Fatalf("the late node lacks epoch %d (it holds %d records, the validator %d)", r.Epoch, len(lateEpochs), len(epochs))
		}
	}
	for _, h := range []string{homes["validator"], homes["miner1"], homes["late"]} {
		if out := pogOut(t, bin, "audit", "--home", h); !strings.Contains(out, "audit          OK") {
			t.Fatalf("pog audit on %s: %s", h, out)
		}
	}
	// An incremental audit of the last epoch checks no more and agrees.
	var full, inc audit.Report
	json.Unmarshal([]byte(pogOut(t, bin, "audit", "--home", homes["validator"], "--json")), &full)
	json.Unmarshal([]byte(pogOut(t, bin, "audit", "--home", homes["validator"], "--since", fmt.Sprint(last), "--json")), &inc)
	if len(inc.Problems) > 0 || inc.Recomputed == 0 || inc.Rounds > full.Rounds || inc.Recomputed > full.Recomputed || inc.ConsensusHashes[last] != full.ConsensusHashes[last] {
		t.Fatalf("pog audit --since %d: %d of %d rounds, hash %s vs %s, problems %v", last, inc.Rounds, full.Rounds,
			inc.ConsensusHashes[last], full.ConsensusHashes[last], inc.Problems)
	}
}
