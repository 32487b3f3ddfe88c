package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashLoop SIGKILLs the nodes of a small network (1 validator, 2
// miners, 10 s epochs) at random points, restarting each: the round and
// epoch records a home holds never decrease across kills, and the
// validator's home passes audit at the end. It takes about two minutes, so
// it runs only with POG_CRASH_TEST=1 (.ci/hardening.sh sets it);
// POG_CRASH_SEED replays a run's kill schedule.
func TestCrashLoop(t *testing.T) {
	if os.Getenv("POG_CRASH_TEST") != "1" {
		t.Skip("set POG_CRASH_TEST=1 to run the SIGKILL crash loop")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("POG_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("POG_CRASH_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	bin := buildPog(t)
	dir := t.TempDir()
	names := []string{"validator", "miner1", "miner2"}
	homes := map[string]string{}
	for _, n := range names {
		homes[n] = filepath.Join(dir, n)
		pogOut(t, bin, "init", "--home", homes[n], "--profile", "local")
		path := filepath.Join(homes[n], "config.toml")
		cfg, _ := os.ReadFile(path)
		// No pruning: counts must never decrease.
		c := strings.Replace(string(cfg), `epoch_length = "1m0s"`, `epoch_length = "10s"`, 1)
		if !strings.Contains(c, "retain_evidence_epochs = 4") {
			t.Fatal("the local profile's retention is not the default 4 this test turns off")
		}
		c = strings.Replace(c, "retain_evidence_epochs = 4", "retain_evidence_epochs = -1", 1)
		os.WriteFile(path, []byte(c), 0o644)
	}
	vaddr := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freeTCPPort(t))
	vid := pogOut(t, bin, "id", "--home", homes["validator"])
	args := map[string][]string{
		"validator": {"run", "--home", homes["validator"], "--role", "validator", "--listen", vaddr, "--log-format", "json"},
	}
	for _, m := range names[1:] {
		args[m] = []string{"run", "--home", homes[m], "--role", "miner", "--listen", "/ip4/127.0.0.1/tcp/0",
			"--bootstrap", vaddr + "/p2p/" + vid, "--log-format", "json"}
	}
	procs := map[string]*proc{}
	for _, n := range names {
		procs[n] = startProc(t, bin, args[n]...)
	}
	waitVerified(t, procs["validator"], 90*time.Second)

	counts := map[string][2]int{} // rounds, epoch records per home at its last kill
	for kill := range 5 {
		time.Sleep(time.Duration(2000+rng.IntN(6000)) * time.Millisecond) // a random point in the run, not synchronisation
		n := names[0]                                                     // the validator every other kill, so its evidence is checked across kills
		if kill%2 == 1 {
			n = names[1+rng.IntN(2)]
		}
		p := procs[n]
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		rounds, epochs := homeCounts(t, bin, homes[n])
		prev := counts[n]
		t.Logf("kill %d: %s holds %d rounds, %d epoch records (before: %d, %d)", kill+1, n, rounds, epochs, prev[0], prev[1])
		if rounds < prev[0] || epochs < prev[1] {
			t.Fatalf("kill %d of %s: counts fell from %v to [%d %d]", kill+1, n, prev, rounds, epochs)
		}
		counts[n] = [2]int{rounds, epochs}
		procs[n] = startProc(t, bin, args[n]...)
	}
	// Work goes on after the kills: a verified round, then an epoch closes.
	drain(procs["validator"])
	waitVerified(t, procs["validator"], 90*time.Second)
	waitEvent(t, procs["validator"], "epoch closed", 60*time.Second)
	for _, n := range names {
		procs[n].stop(t, 30*time.Second)
	}
	rounds, epochs := homeCounts(t, bin, homes["validator"])
	if c := counts["validator"]; rounds < c[0] || epochs < c[1] || epochs == 0 {
		t.Fatalf("validator at the end: %d rounds, %d epoch records (at its last kill %v)", rounds, epochs, c)
	}
	if out, code := pogRun(t, bin, 5*time.Minute, "audit", "--home", homes["validator"]); code != 0 || !strings.Contains(out, "audit          OK") {
		t.Fatalf("audit after the crash loop: exit %d:\n%s", code, out)
	}
}

func freeTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitVerified(t *testing.T, p *proc, timeout time.Duration) {
	waitEvent(t, p, "round verified", timeout)
}

func waitEvent(t *testing.T, p *proc, msg string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-p.events:
			if ev["msg"] == msg {
				return
			}
		case err := <-p.done:
			t.Fatalf("%v exited (%v) before %q", p.cmd.Args, err, msg)
		case <-deadline:
			t.Fatalf("no %q within %v", msg, timeout)
		}
	}
}

// homeCounts lists a stopped node's round and epoch records.
func homeCounts(t *testing.T, bin, home string) (rounds, epochs int) {
	t.Helper()
	var r []roundRow
	var e []epochRow
	if out, code := pogRun(t, bin, time.Minute, "rounds", "--home", home, "--json"); code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("pog rounds after a kill: exit %d:\n%s", code, out)
	}
	if out, code := pogRun(t, bin, time.Minute, "epochs", "--home", home, "--json"); code != 0 || json.Unmarshal([]byte(out), &e) != nil {
		t.Fatalf("pog epochs after a kill: exit %d:\n%s", code, out)
	}
	return len(r), len(e)
}

// drain drops the events p logged so far.
func drain(p *proc) {
	for {
		select {
		case <-p.events:
		default:
			return
		}
	}
}
