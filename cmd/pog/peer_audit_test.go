package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/store"
)

// TestAuditPeer runs `pog audit --peer` against a running validator (in
// this process, with no miners: its records are empty but signed and
// chained) and checks the usage errors: each a one-line message, no panic.
func TestAuditPeer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.LocalConfig()
	cfg.Node.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	cfg.Network.EpochLength = config.Duration{Duration: time.Second}
	records := make(chan uint64, 16)
	n, err := node.New(ctx, node.Options{Config: cfg, Role: node.RoleValidator, Key: key, Store: st,
		Logger: slog.New(slog.DiscardHandler), OnEpochRecord: func(e uint64, _ peer.ID) { records <- e }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { n.Run(ctx); st.Close(); close(done) }()
	defer func() { cancel(); <-done }()
	for i := 0; i < 2; i++ {
		select {
		case <-records:
		case <-time.After(20 * time.Second):
			t.Fatal("the validator closed no epoch")
		}
	}
	addr := n.Addrs()[0]
	code, out, errs := runPog("audit", "--peer", addr)
	if code != 0 || !strings.Contains(out, "audit          OK") || !strings.Contains(out, "validators     "+n.ID().String()) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	t.Logf("pog audit --peer:\n%s", out)
	// Any node serves the off-schedule challenges it keeps; a validator,
	// never challenged, keeps none.
	if !strings.Contains(out, "off schedule   no signer named (the challenges the peer keeps of ") {
		t.Errorf("no off-schedule line: %q", out)
	}
	code, out, errs = runPog("audit", "--peer", addr, "--json")
	var rep audit.PeerAuditReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.OffScheduleEpochs < 2 || rep.OffSchedule != nil || rep.OffScheduleOthers != nil {
		t.Errorf("audit --json: exit %d (%v), off-schedule epochs %d, named %v and %v\n%s", code, err, rep.OffScheduleEpochs, rep.OffSchedule, rep.OffScheduleOthers, errs)
	}
	other, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	otherID, _ := peer.IDFromPrivateKey(other)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--peer", "/ip4/127.0.0.1/tcp/1"}, 2, "want a multiaddr ending in /p2p/PEER-ID"},
		{[]string{"--peer", "nonsense"}, 2, "--peer \"nonsense\""},
		{[]string{"--peer", addr, "--validator", "nope"}, 2, "--validator \"nope\""},
		{[]string{"--peer", addr, "--since", "1"}, 2, "--since needs a home"},
		{[]string{"--validator", n.ID().String()}, 2, "--validator needs --peer"},
		{[]string{"--peer", "/ip4/127.0.0.1/tcp/1/p2p/" + otherID.String()}, 1, "cannot reach"},
		{[]string{"--peer", addr, "--validator", otherID.String()}, 1, "no validator's round evidence could be fetched"},
	} {
		code, out, errs := runPog(append([]string{"audit"}, c.args...)...)
		if c.args[len(c.args)-1] == otherID.String() && !strings.Contains(out, "not fetched    "+otherID.String()+": the peer holds no epoch record of it") {
			t.Errorf("audit %v: what was not fetched is not printed: %q", c.args, out)
		}
		if code != c.code || !strings.Contains(errs, c.want) || strings.Contains(errs, "goroutine") {
			t.Errorf("audit %v: exit %d, %q%q; want exit %d and %q", c.args, code, out, errs, c.code, c.want)
		}
	}
}

// The peer audit prints each signer of off-schedule challenges the peer
// keeps, the audited validators marked, and fails on an audited one.
func TestPrintOffSchedule(t *testing.T) {
	a := audit.OffScheduleSigner{Signer: "12D3KooWsquatter", Challenges: 3, Epochs: 2, FirstEpoch: 4, LastEpoch: 5, Unstaked: true}
	o := audit.OffScheduleSigner{Signer: "12D3KooWlate", Challenges: 1, Epochs: 1, FirstEpoch: 5, LastEpoch: 5}
	rep := &audit.PeerAuditReport{Report: &audit.Report{Problems: []string{"validator 12D3KooWsquatter challenged …"}},
		Audited: []string{"12D3KooWsquatter"}, OffScheduleEpochs: 2, OffSchedule: []audit.OffScheduleSigner{a},
		OffScheduleOthers: []audit.OffScheduleSigner{o}, OffScheduleAmbiguous: 4}
	var out, errs strings.Builder
	printPeerAudit(&out, "peer", rep)
	for _, want := range []string{
		"off schedule   2 signers named (the challenges the peer keeps of 2 epochs) (4 more on schedule for one kind of miner only: not counted)\n",
		"               12D3KooWsquatter (audited): 3 challenges in 2 epochs, 4 to 5; it owns no slot, so its signatures prove it\n",
		"               12D3KooWlate: 1 challenge in epoch 5; each outside its slots' opening windows at the peer's time of receipt\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := peerAuditVerdict(&errs, rep); code != 1 || !strings.Contains(errs.String(), "FAILED: validator 12D3KooWsquatter challenged") {
		t.Errorf("verdict %d: %q", code, errs.String())
	}
}
